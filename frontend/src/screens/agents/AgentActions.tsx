import {toast} from 'sonner'
import {api, errorMessage, type Agent, type Project} from '../../api'
import {Menu, type MenuItem} from '../../components/Menu'
import {askedFor, asking} from '../../lib/answers'
import {attentionReason, isRestarting} from '../../lib/groups'
import {canResume, isLive} from '../../lib/status'
import {queuedFor} from '../../lib/pause'
import {useQueryClient} from '@tanstack/react-query'
import {keys, upsertAgent} from '../../state/queries'
import {useUI} from '../../state/ui'

/**
 * Runs an engine call; a rejection becomes a toast with the engine's message.
 * The record it returns is not put in the cache: the engine pushes every
 * transition in order, and a returned "running" can arrive after the pushed
 * "completed" of a run that ended at once.
 */
export function useAgentCall() {
  return async (what: string, call: () => Promise<Agent | void>): Promise<Agent | void> => {
    try {
      return await call()
    } catch (err) {
      toast.error(`Cannot ${what}`, {description: errorMessage(err)})
    }
  }
}

export type OpKind = 'allow' | 'deny' | 'choose' | 'start' | 'stop' | 'resume' | 'pause' | 'unpause' | 'ack' | 'edit' | 'remove'
export interface Op {
  kind: OpKind
  label: string
  title: string
  disabled?: boolean
  run: () => void
}

/**
 * Acknowledges what the agent needs of the user: it leaves Needs you (and
 * the count) until it needs them again. The record comes back at once, so
 * the row moves without waiting for the pushed one.
 */
export function useAcknowledge() {
  const qc = useQueryClient()
  const call = useAgentCall()
  return async (a: Agent) => {
    const rec = await call(`acknowledge ${a.id}`, () => api.agents.ack(a.projectId, a.id))
    if (rec) upsertAgent(qc, rec)
  }
}

const sid = (a: Agent) => (!a.sessionId ? '' : a.sessionId.length > 8 ? `${a.sessionId.slice(0, 8)}…` : a.sessionId)

/** What can be done to an agent now, the primary one first. */
export function useAgentOps(agent: Agent): Op[] {
  const call = useAgentCall()
  const ack = useAcknowledge()
  const open = useUI((s) => s.open)
  const selectAgent = useUI((s) => s.selectAgent)
  const p = agent.projectId
  const why = attentionReason(agent)
  const live = isLive(agent)
  const stopping = agent.status === 'stopping' || agent.status === 'killing'
  const restarting = isRestarting(agent)
  const queued = agent.status === 'queued'
  const paused = agent.status === 'paused'
  const resumable = canResume(agent)
  // Read, not watched: a title need not re-render thirty rows when a project changes.
  const projectPaused = !!useQueryClient().getQueryData<Project[]>(keys.projects)?.find((x) => x.id === p)?.paused

  const resume = () => void call('resume', () => api.agents.resume(p, agent.id))
  const stop = async () => {
    // A Claude session stopped mid-turn is not lost: say so, with the way back.
    const midTurn = agent.profile === 'claude-stream-json' && agent.status === 'running' &&
      (!agent.activity || agent.activity.state === 'busy' || agent.activity.state === 'working')
    const rec = await call('stop', () => api.agents.stop(p, agent.id))
    if (rec && midTurn && rec.sessionId && (rec.resumeArgs?.length ?? 0) > 0) {
      toast.info(`Stopped ${agent.id} mid-turn`, {
        description: `Its session ${sid(rec)} can be resumed: Resume continues where it stopped.`,
        action: {label: 'Resume', onClick: () => void call('resume', () => api.agents.resume(p, agent.id))},
      })
    }
  }

  const ops: Op[] = []
  // What it asks through Shepherd's permission tool comes first: answered from the row.
  const asks = asking(agent)
  if (asks === 'permission') {
    const what = askedFor(agent)
    ops.push({kind: 'allow', label: 'Allow', title: `Allow once: let it run ${what}, this once (Always allow and Deny with a message: in its detail)`,
      run: () => void call('allow', () => api.agents.answer(p, agent.id, {action: 'allow'}).then(() => undefined))})
    ops.push({kind: 'deny', label: 'Deny', title: `Refuse ${what}; it goes on without it`,
      run: () => void call('deny', () => api.agents.answer(p, agent.id, {action: 'deny'}).then(() => undefined))})
  } else if (asks === 'choice') {
    ops.push({kind: 'choose', label: 'Choose…', title: 'It asks you to choose: see its questions and options', run: () => selectAgent(agent.id)})
  }
  if (live || restarting || queued) {
    ops.push({
      kind: 'stop', label: stopping ? 'Stopping…' : queued ? 'Cancel' : 'Stop', disabled: stopping, run: () => void stop(),
      title: restarting ? 'Cancel the pending keep-alive restart'
        : queued ? `Take it out of the queue, where it waits ${queuedFor(agent.queuedAction) || 'to start'}`
          : `SIGTERM to its process group, then SIGKILL after ${agent.graceSec} s`,
    })
  }
  if (agent.status === 'running' || queued) {
    const safe = agent.profile === 'claude-stream-json'
      ? 'Let the tool call in flight finish, then stop it'
      : `Stop it (SIGINT, SIGTERM, then SIGKILL after ${agent.graceSec} s)`
    ops.push({
      kind: 'pause', label: 'Pause', run: () => void call('pause', () => api.agents.pause(p, agent.id)),
      title: queued ? 'Take it out of the queue and keep it paused until you resume it'
        : `${safe}; it stays paused${agent.sessionId ? ', its session kept,' : ''} until you resume it`,
    })
  }
  if (paused) {
    ops.push({
      kind: 'unpause', label: 'Resume', run: () => void call('resume', () => api.agents.unpause(p, agent.id)),
      title: (resumable ? `Continue session ${sid(agent)} where it paused` : 'Start it again with its arguments') +
        (projectPaused ? ' (the project is paused: it waits in the queue until the project is unpaused)' : ''),
    })
  }
  const resumeOp: Op | null = resumable && !paused
    ? {kind: 'resume', label: 'Resume', run: resume, title: `Continue session ${sid(agent)} with its resume arguments`}
    : null
  const startOp: Op | null = !live && !queued
    ? {kind: 'start', label: paused ? 'Start afresh' : 'Start', run: () => void call('start', () => api.agents.start(p, agent.id)),
      title: restarting ? 'Start now instead of waiting for the restart' : 'Start a new run with its command and arguments'}
    : null
  // A session that did not finish is better resumed than started afresh.
  if (resumeOp && agent.status !== 'completed') ops.push(resumeOp)
  if (startOp) ops.push(startOp)
  if (resumeOp && agent.status === 'completed') ops.push(resumeOp)
  if (why) {
    ops.push({kind: 'ack', label: 'Acknowledge', run: () => void ack(agent),
      title: `Seen it (${why}): take it out of Needs you until it needs you again; its history is kept (A)`})
  }
  if (!live && !queued) ops.push({kind: 'edit', label: 'Edit', title: 'Change its command, arguments and options', run: () => open({kind: 'editAgent', agentId: agent.id})})
  ops.push({kind: 'remove', label: 'Remove…', title: 'Forget this agent (asks first)', run: () => open({kind: 'removeAgent', agentId: agent.id})})
  return ops
}

function OpButton({op, className, tabIndex}: {op: Op; className?: string; tabIndex?: number}) {
  return (
    <button type="button" className={className} title={op.title} disabled={op.disabled} data-op={op.kind} tabIndex={tabIndex}
      onClick={(e) => {
        e.stopPropagation()
        op.run()
      }}>{op.label}</button>
  )
}

/** A row's one primary action and the rest in a menu; in the Tab order only on the list's current row (tabbable). */
export function RowActions({agent, tabbable = true}: {agent: Agent; tabbable?: boolean}) {
  const ops = useAgentOps(agent)
  const [primary, ...rest] = ops
  const copy: MenuItem = {
    label: 'Copy id', title: 'The id every CLI command takes',
    onSelect: () => void navigator.clipboard?.writeText(agent.id).then(() => toast.success(`Copied ${agent.id}`), () => {}),
  }
  const items: MenuItem[] = [
    ...rest.map((o) => ({label: o.label, title: o.title, disabled: o.disabled, danger: o.kind === 'remove', onSelect: o.run})),
    copy,
  ]
  return (
    <span className="row-actions" onClick={(e) => e.stopPropagation()}>
      <OpButton op={primary} className={primary.kind === 'stop' && agent.status !== 'queued' ? 'act stop' : 'act'}
        tabIndex={tabbable ? 0 : -1}/>
      <Menu label={`More actions for ${agent.id}`} items={items} tabIndex={tabbable ? 0 : -1}/>
    </span>
  )
}

/** Every action as a button, for the detail's header. */
export function AgentActions({agent}: {agent: Agent}) {
  // Acknowledge is on the detail's Needs you line, answers in its question panel.
  const ops = useAgentOps(agent).filter((o) => !['ack', 'allow', 'deny', 'choose'].includes(o.kind))
  return (
    <span className="actions" onClick={(e) => e.stopPropagation()}>
      {ops.map((o) => <OpButton key={o.kind} op={o} className={o.kind === 'remove' ? 'danger' : undefined}/>)}
    </span>
  )
}
