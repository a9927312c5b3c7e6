import {useEffect, useState} from 'react'
import type {Agent} from '../../api'
import {api} from '../../api'
import {budgetQuestion, budgetReached, limitsText, suggestedRaise} from '../../lib/budget'
import {useProjects} from '../../state/queries'
import {useAgentCall} from '../agents/AgentActions'

/** An agent paused by a budget asks: raise the limit it reached, resume once past it, or stop. */
export function BudgetPanel({agent: a}: {agent: Agent}) {
  const project = useProjects().data?.find((p) => p.id === a.projectId)
  const q = budgetQuestion(a, project)
  const [limit, setLimit] = useState(String(suggestedRaise(q.current, q.unit)))
  const [busy, setBusy] = useState(false)
  // The suggestion follows the limit asked about (the project's daily budget arrives later).
  useEffect(() => setLimit(String(suggestedRaise(q.current, q.unit))), [q.current, q.unit])
  const call = useAgentCall()
  if (!budgetReached(a)) return null
  const answer = async (action: 'raise' | 'once' | 'stop') => {
    setBusy(true)
    await call(action === 'raise' ? 'raise the budget' : action === 'once' ? 'resume once' : 'stop',
      () => api.agents.answerBudget(a.projectId, a.id, action, action === 'raise' ? Number(limit.replace(/^\$/, '')) : 0))
    setBusy(false)
  }
  const daily = a.budgetPause === 'daily'
  return (
    <section className="budget-panel" role="alert" aria-label="Budget reached" data-budget-panel={a.budgetPause}>
      <p>
        <strong>Budget reached</strong> — {a.pauseNote || 'a limit was reached'}. The agent is paused, its session kept.
        {!daily && limitsText(a) && <span className="muted"> Its budget: {limitsText(a)}.</span>}
      </p>
      <div className="row">
        <label className="raise">
          Raise {q.what} to {q.unit === '$' && <span className="muted">$</span>}
          <input name="limit" inputMode={q.unit === '$' ? 'decimal' : 'numeric'} value={limit} size={6}
            onChange={(e) => setLimit(e.target.value)}/>
        </label>
        <button type="button" className="primary" disabled={busy} onClick={() => void answer('raise')}
          title={daily ? 'Raise the daily budget: every agent it paused resumes' : 'Raise the limit and resume the session'}>
          Raise and resume
        </button>
        <button type="button" disabled={busy} onClick={() => void answer('once')}
          title="Resume the session for one more run past the limit; the limit holds again after it">Resume once</button>
        <button type="button" disabled={busy} onClick={() => void answer('stop')} title="Leave it stopped">Stop</button>
      </div>
    </section>
  )
}
