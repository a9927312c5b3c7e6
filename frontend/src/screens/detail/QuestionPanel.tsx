import {useEffect, useState} from 'react'
import {useQuery, useQueryClient} from '@tanstack/react-query'
import {toast} from 'sonner'
import type {Agent, AnswerInput, Asked} from '../../api'
import {api, errorMessage} from '../../api'
import {asking, missingAnswer, policyText, ruleProblem, suggestedRule, toggleChoice} from '../../lib/answers'

export const questionsKey = (p: string, id: string) => ['questions', p, id] as const
export const rulesKey = (p: string, id: string) => ['rules', p, id] as const

/** The agent's questions, read again whenever what it waits on changes. */
export function useQuestions(a: Agent) {
  const on = asking(a) !== ''
  return useQuery({queryKey: [...questionsKey(a.projectId, a.id), a.attention ?? ''], enabled: on,
    queryFn: () => api.agents.questions(a.projectId, a.id)})
}

/** Sends an answer; false (and a toast saying why) when the engine refused it. */
export function useAnswer(a: Agent) {
  const qc = useQueryClient()
  return async (what: string, answer: AnswerInput): Promise<boolean> => {
    try {
      await api.agents.answer(a.projectId, a.id, answer)
      void qc.invalidateQueries({queryKey: questionsKey(a.projectId, a.id)})
      void qc.invalidateQueries({queryKey: rulesKey(a.projectId, a.id)})
      return true
    } catch (err) {
      toast.error(`Cannot ${what}`, {description: errorMessage(err)})
      return false
    }
  }
}

/**
 * What the agent asks through Shepherd's permission tool, answered here:
 * a permission (Allow once, Always allow with a rule prefilled from the
 * suggestion and editable, for this agent or the project, Deny with a
 * message) or an AskUserQuestion's choices (a click, or free text).
 */
export function QuestionPanel({agent: a}: {agent: Agent}) {
  const kind = asking(a)
  const {data} = useQuestions(a)
  const q = data?.[0]
  if (!kind || !q) return null
  return q.questions?.length
    ? <ChoicePanel agent={a} q={q} more={data.length - 1}/>
    : <PermissionPanel agent={a} q={q} more={data.length - 1}/>
}

function More({n}: {n: number}) {
  return n > 0 ? <span className="muted"> {n} more question{n === 1 ? '' : 's'} after this one.</span> : null
}

function PermissionPanel({agent: a, q, more}: {agent: Agent; q: Asked; more: number}) {
  const [rule, setRule] = useState(suggestedRule(q))
  const [scope, setScope] = useState<'agent' | 'project'>('agent')
  const [message, setMessage] = useState('')
  const [busy, setBusy] = useState(false)
  useEffect(() => {
    setRule(suggestedRule(q))
    setMessage('')
  }, [q.id]) // eslint-disable-line react-hooks/exhaustive-deps
  const answer = useAnswer(a)
  const send = async (what: string, input: AnswerInput) => {
    setBusy(true)
    await answer(what, {questionId: q.id, ...input})
    setBusy(false)
  }
  const problem = ruleProblem(rule)
  const command = typeof q.input.command === 'string' ? q.input.command : ''
  return (
    <section className="question-panel" role="alert" aria-label="Permission asked" data-question={q.id}>
      <p>
        <strong>{a.id} asks permission</strong> for <code className="asked">{q.summary}</code>.
        {q.denyAt && <span className="muted"> Denied at {new Date(q.denyAt).toLocaleTimeString()} without an answer.</span>}
        <More n={more}/>
      </p>
      {command && q.tool === 'Bash' && typeof q.input.description === 'string' && q.input.description &&
        <p className="muted">{q.input.description}</p>}
      <div className="row">
        <button type="button" className="primary" disabled={busy} data-answer="allow"
          onClick={() => void send('allow', {action: 'allow'})} title="Let this one call run; ask again next time">Allow once</button>
        <label className="always-rule">
          Always allow
          <input name="rule" value={rule} size={28} aria-label="Rule to keep" aria-invalid={problem ? true : undefined}
            title="A rule in Claude Code's syntax: Bash(npm test:*), Edit(./src/**), WebFetch(domain:example.com)"
            onChange={(e) => setRule(e.target.value)}/>
        </label>
        <select aria-label="Keep the rule for" value={scope} onChange={(e) => setScope(e.target.value as 'agent' | 'project')}>
          <option value="agent">for {a.id}</option>
          <option value="project">for the project</option>
        </select>
        <button type="button" disabled={busy || !!problem} data-answer="always" title={problem || `Allow it, and keep ${rule} from now on`}
          onClick={() => void send('always allow', {action: 'always', rule: rule.trim(), scope})}>Always allow</button>
      </div>
      <div className="row">
        <input name="message" value={message} size={40} placeholder="Tell the agent why (optional)" aria-label="Message with a deny"
          onChange={(e) => setMessage(e.target.value)}
          onKeyDown={(e) => e.key === 'Enter' && !busy && void send('deny', {action: 'deny', message})}/>
        <button type="button" className="danger" disabled={busy} data-answer="deny"
          onClick={() => void send('deny', {action: 'deny', message})} title="Refuse it; the agent reads the message and goes on">Deny</button>
      </div>
    </section>
  )
}

function ChoicePanel({agent: a, q, more}: {agent: Agent; q: Asked; more: number}) {
  const [answers, setAnswers] = useState<Record<string, string>>({})
  const [free, setFree] = useState(false)
  const [busy, setBusy] = useState(false)
  useEffect(() => setAnswers({}), [q.id])
  const answer = useAnswer(a)
  const qs = q.questions ?? []
  const missing = missingAnswer(q, answers)
  const set = (question: string, v: string) => setAnswers((cur) => ({...cur, [question]: v}))
  const send = async (input: AnswerInput) => {
    setBusy(true)
    await answer(input.action === 'deny' ? 'decline' : 'answer', {questionId: q.id, ...input})
    setBusy(false)
  }
  return (
    <section className="question-panel" role="alert" aria-label="Question asked" data-question={q.id}>
      <p><strong>{a.id} asks you to choose.</strong><More n={more}/></p>
      {qs.map((qq) => (
        <fieldset key={qq.question} className="choice">
          <legend>{qq.header ? <span className="muted">{qq.header}: </span> : null}{qq.question}</legend>
          {free
            ? <input aria-label={`Your answer to ${qq.question}`} value={answers[qq.question] ?? ''} size={40}
              onChange={(e) => set(qq.question, e.target.value)}/>
            : (qq.options ?? []).map((o) => {
              const chosen = (answers[qq.question] ?? '').split(', ').includes(o.label)
              return (
                <button type="button" key={o.label} aria-pressed={chosen} title={o.description} data-choice={o.label}
                  className={chosen ? 'choice-option chosen' : 'choice-option'}
                  onClick={() => set(qq.question, qq.multiSelect ? toggleChoice(answers[qq.question] ?? '', o.label) : o.label)}>
                  {o.label}{o.description && <span className="muted"> — {o.description}</span>}
                </button>
              )
            })}
        </fieldset>
      ))}
      <div className="row">
        <button type="button" className="primary" disabled={busy || !!missing} data-answer="answer"
          title={missing ? `Answer: ${missing}` : 'Send your answer; the agent goes on with it'}
          onClick={() => void send({action: 'answer', answers, free})}>Answer</button>
        <label><input type="checkbox" checked={free} onChange={(e) => {
          setFree(e.target.checked)
          setAnswers({})
        }}/> Answer in my own words</label>
        <button type="button" className="danger" disabled={busy} data-answer="deny"
          onClick={() => void send({action: 'deny', message: 'The user declined to answer.'})}>Decline</button>
      </div>
    </section>
  )
}

/** The always-allow rules that answer for the agent, removable, and its policy for questions nobody answers. */
export function RulesPanel({agent: a}: {agent: Agent}) {
  const qc = useQueryClient()
  const {data} = useQuery({queryKey: rulesKey(a.projectId, a.id), queryFn: () => api.agents.rules(a.projectId, a.id)})
  const [adding, setAdding] = useState('')
  if (a.profile !== 'claude-stream-json' || !data) return null
  const refresh = () => void qc.invalidateQueries({queryKey: rulesKey(a.projectId, a.id)})
  const act = async (what: string, f: () => Promise<unknown>) => {
    try {
      await f()
      refresh()
      return true
    } catch (err) {
      toast.error(`Cannot ${what}`, {description: errorMessage(err)})
      return false
    }
  }
  const rows = [...(data.agent ?? []).map((r) => ({...r, scope: 'agent' as const})), ...(data.project ?? []).map((r) => ({...r, scope: 'project' as const}))]
  return (
    <section className="rules-panel" aria-label="Always-allow rules">
      <h3>Always allowed</h3>
      {rows.length === 0
        ? <p className="muted">No rules: every call that needs approval is asked.</p>
        : (
          <ul>
            {rows.map((r) => (
              <li key={r.scope + r.rule}>
                <code>{r.rule}</code> <span className="muted">{r.scope === 'project' ? 'every agent of the project' : `${a.id} only`}</span>{' '}
                <button type="button" className="link" aria-label={`Remove ${r.rule}`} data-remove-rule={r.rule}
                  onClick={() => void act(`remove ${r.rule}`, () => api.agents.removeRule(a.projectId, a.id, r.rule, r.scope))}>Remove</button>
              </li>
            ))}
          </ul>
        )}
      <div className="row">
        <input aria-label="New rule" placeholder="Bash(npm test:*)" value={adding} size={24} onChange={(e) => setAdding(e.target.value)}/>
        <button type="button" disabled={!!ruleProblem(adding)} title={ruleProblem(adding) || `Keep ${adding} for ${a.id}`}
          onClick={() => void act(`keep ${adding}`, () => api.agents.addRule(a.projectId, a.id, adding.trim(), 'agent')).then((ok) => ok && setAdding(''))}>
          Add
        </button>
        <label>
          Unanswered questions:{' '}
          <select aria-label="Policy for unanswered questions" value={data.denyAfterMin}
            onChange={(e) => void act('set the policy', () => api.agents.setAnswerPolicy(a.projectId, a.id, Number(e.target.value)))}>
            {[0, 5, 15, 60, 240].concat([0, 5, 15, 60, 240].includes(data.denyAfterMin) ? [] : [data.denyAfterMin]).map((m) => (
              <option key={m} value={m}>{m === 0 ? 'wait for my answer' : `deny after ${m} min`}</option>
            ))}
          </select>
        </label>
        <span className="muted">{policyText(data.denyAfterMin)}</span>
      </div>
    </section>
  )
}
