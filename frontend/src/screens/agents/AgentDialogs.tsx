import {useState} from 'react'
import {useQueryClient} from '@tanstack/react-query'
import {toast} from 'sonner'
import {api, errorMessage, type Agent} from '../../api'
import {isRestarting, stoppable} from '../../lib/groups'
import {Confirm, Dialog} from '../../components/Dialog'
import {isLive} from '../../lib/status'
import {keys, upsertAgent, useAgents, useProjects} from '../../state/queries'
import {useUI} from '../../state/ui'
import {AgentForm} from './AgentForm'
import {RemoveWorktreeDialog} from './RemoveWorktreeDialog'

export function AgentFormDialog({agentId}: {agentId?: string}) {
  const {projectId, close, selectAgent} = useUI()
  const qc = useQueryClient()
  const project = useProjects().data?.find((p) => p.id === projectId)
  const editing = useAgents(projectId).data?.find((a) => a.id === agentId)
  if (!projectId || (agentId && !editing)) return null
  const done = (a: Agent, start?: boolean) => {
    upsertAgent(qc, a)
    void qc.invalidateQueries({queryKey: keys.projects})
    selectAgent(a.id)
    close()
    if (start) {
      // A start error stays on the row and in the detail (the record's error); the toast says it now.
      // (Its states arrive as pushed events.)
      api.agents.start(projectId, a.id).catch((err: unknown) =>
        toast.error(`Cannot start ${a.id}`, {description: errorMessage(err)}))
    }
  }
  return (
    <Dialog title={editing ? `Edit ${editing.id}` : 'New agent'} onClose={close} wide>
      <AgentForm projectId={projectId} projectPath={project?.path ?? ''} editing={editing} onDone={done} onCancel={close}/>
    </Dialog>
  )
}

/** Removing asks first; a live agent is stopped first. The log can be kept or deleted. */
export function RemoveAgentDialog({agentId}: {agentId: string}) {
  const {projectId, agentId: selected, close, selectAgent} = useUI()
  const qc = useQueryClient()
  const agent = useAgents(projectId).data?.find((a) => a.id === agentId)
  const [deleteLog, setDeleteLog] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')
  if (!projectId || !agent) return null
  if (agent.workspace?.worktree) {
    return <RemoveWorktreeDialog agent={agent} onClose={close} onRemoved={() => {
      if (selected === agentId) selectAgent(null)
      close()
    }}/>
  }
  const live = isLive(agent)
  const remove = async () => {
    setBusy(true)
    try {
      await api.agents.remove(projectId, agentId, live, deleteLog)
      qc.setQueryData<Agent[]>(keys.agents(projectId), (old) => old?.filter((a) => a.id !== agentId))
      if (selected === agentId) selectAgent(null)
      close()
    } catch (err) {
      setError(errorMessage(err))
      setBusy(false)
    }
  }
  return (
    <Confirm title={`Remove ${agent.id}`} confirmLabel={live ? 'Stop and remove' : 'Remove'} danger busy={busy}
      onConfirm={remove} onClose={close}
      message={live
        ? <p><strong>{agent.id} is running.</strong> Removing it stops it first (SIGTERM, then SIGKILL after {agent.graceSec} s).</p>
        : <p>Shepherd forgets {agent.id} and its record.</p>}>
      <label className="check">
        <input type="checkbox" checked={deleteLog} onChange={(e) => setDeleteLog(e.target.checked)}/>
        Also delete its log
      </label>
      {error && <p className="field-error" role="alert">{error}</p>}
    </Confirm>
  )
}

/** Stop all asks first, with the count: live agents, queued ones and keep-alive agents waiting to restart. */
export function StopAllDialog() {
  const {projectId, close} = useUI()
  const agents = useAgents(projectId).data ?? []
  const project = useProjects().data?.find((p) => p.id === projectId)
  const [busy, setBusy] = useState(false)
  const [frozen, setFrozen] = useState<number | null>(null)
  const qc = useQueryClient()
  if (!projectId) return null
  const todo = agents.filter(stoppable)
  const restarting = todo.filter(isRestarting).length
  const sessions = todo.filter((a) => a.profile === 'claude-stream-json' && a.status === 'running').length
  const n = frozen ?? todo.length // the count asked about, while they stop
  const stopAll = async () => {
    setBusy(true)
    setFrozen(todo.length)
    try {
      const res = await api.agents.stopAll(projectId)
      for (const r of res) if (r.record) upsertAgent(qc, r.record)
      const failed = res.filter((r) => r.error)
      if (failed.length) toast.error(`${failed.length} agent${failed.length === 1 ? '' : 's'} did not stop`, {description: failed.map((f) => f.error).join('\n')})
      else toast.success(`Stopped ${res.length} agent${res.length === 1 ? '' : 's'}`)
      close()
    } catch (err) {
      toast.error('Cannot stop all', {description: errorMessage(err)})
      setBusy(false)
    }
  }
  return (
    <Confirm title={`Stop ${n} running agent${n === 1 ? '' : 's'}?`} confirmLabel={busy ? 'Stopping…' : `Stop ${n}`} danger busy={busy || n === 0}
      onConfirm={stopAll} onClose={close}
      message={<>
        <p>Every agent of <strong>{project?.name ?? 'this project'}</strong> that is running or would run again is stopped:
          SIGTERM to its process group, then SIGKILL after its grace.</p>
        {restarting > 0 && <p>{restarting} of them {restarting === 1 ? 'is' : 'are'} waiting for a keep-alive restart; {restarting === 1 ? 'that restart is' : 'those restarts are'} cancelled.</p>}
        {sessions > 0 && <p className="muted">Claude sessions stopped mid-turn can be resumed later (Resume).</p>}
      </>}/>
  )
}
