import {useEffect, useState} from 'react'
import type {Agent} from '../../api'
import {api} from '../../api'
import {budgetQuestion, budgetReached, limitsText, raiseProblem, reachedOf, suggestedRaise} from '../../lib/budget'
import {money} from '../../lib/usage'
import {useProjects} from '../../state/queries'
import {useAgentCall} from '../agents/AgentActions'

type Answer = 'raise' | 'remove' | 'once' | 'stop'

const DOING: Record<Answer, string> = {raise: 'raise the budget', remove: 'remove the limit', once: 'resume once', stop: 'stop'}

/**
 * An agent paused by a budget asks: raise the limit it reached (always above
 * what was reached: the box refuses less, and never takes empty or 0 as "no
 * limit"), remove the limit (an answer of its own), resume once past it, or
 * stop. A daily pause asks about the project's daily budget the same way.
 */
export function BudgetPanel({agent: a}: {agent: Agent}) {
  const project = useProjects().data?.find((p) => p.id === a.projectId)
  const q = budgetQuestion(a, project)
  const reached = reachedOf(a, project)
  const [limit, setLimit] = useState(String(suggestedRaise(reached, q.unit)))
  const [busy, setBusy] = useState(false)
  // The suggestion follows what was reached (the project's daily figures arrive later).
  useEffect(() => setLimit(String(suggestedRaise(reached, q.unit))), [reached, q.unit])
  const call = useAgentCall()
  if (!budgetReached(a)) return null
  const problem = raiseProblem(limit, reached, q.unit)
  const answer = async (action: Answer) => {
    setBusy(true)
    await call(DOING[action], () => api.agents.answerBudget(a.projectId, a.id, action,
      action === 'raise' ? Number(limit.trim().replace(/^\$/, '')) : 0))
    setBusy(false)
  }
  const daily = a.budgetPause === 'daily'
  const reachedText = q.unit === 'turns' ? `${reached} turns` : money(reached)
  return (
    <section className="budget-panel" role="alert" aria-label="Budget reached" data-budget-panel={a.budgetPause}>
      <p>
        <strong>Budget reached</strong> — {a.pauseNote || 'a limit was reached'}. The agent is paused, its session kept.
        {!daily && limitsText(a) && <span className="muted"> Its budget: {limitsText(a)}.</span>}
      </p>
      <div className="row">
        <label className="raise">
          Raise {q.what} to {q.unit === '$' && <span className="muted">$</span>}
          <input name="limit" inputMode={q.unit === '$' ? 'decimal' : 'numeric'} value={limit} size={7}
            aria-invalid={problem ? true : undefined} aria-describedby="raise-help"
            onChange={(e) => setLimit(e.target.value)}
            onKeyDown={(e) => e.key === 'Enter' && !problem && !busy && void answer('raise')}/>
        </label>
        <button type="button" className="primary" disabled={busy || !!problem} onClick={() => void answer('raise')}
          title={daily ? 'Raise the daily budget: every agent it paused resumes' : 'Raise the limit and resume the session'}>
          Raise and resume
        </button>
        <button type="button" disabled={busy} onClick={() => void answer('once')}
          title="Resume the session for one more run past the limit; the limit holds again after it">Resume once</button>
        <button type="button" disabled={busy} onClick={() => void answer('remove')} data-remove-limit
          title={daily ? "Remove the project's daily budget and resume every agent it paused" : 'Run on with no limit of this kind, from this run on'}>
          Remove the limit
        </button>
        <button type="button" disabled={busy} onClick={() => void answer('stop')} title="Leave it stopped">Stop</button>
      </div>
      {/* Always there, one line: the form does not move while typing. */}
      <p id="raise-help" className={problem ? 'raise-help bad' : 'raise-help muted'} aria-live="polite">
        {problem ? `The new limit must be ${problem}.` : `Above ${reachedText}, what was reached.`}
      </p>
    </section>
  )
}
