import {useState} from 'react'
import {useQueryClient} from '@tanstack/react-query'
import {api, errorMessage, type Agent} from '../../api'
import {Confirm, Dialog} from '../../components/Dialog'
import {isLive} from '../../lib/status'
import {keys, upsertAgent, useAgents, useProjects} from '../../state/queries'
import {useUI} from '../../state/ui'
import {AgentForm} from './AgentForm'

export function AgentFormDialog({agentId}: {agentId?: string}) {
  const {projectId, close, selectAgent} = useUI()
  const qc = useQueryClient()
  const project = useProjects().data?.find((p) => p.id === projectId)
  const editing = useAgents(projectId).data?.find((a) => a.id === agentId)
  if (!projectId || (agentId && !editing)) return null
  const done = (a: Agent) => {
    upsertAgent(qc, a)
    void qc.invalidateQueries({queryKey: keys.projects})
    selectAgent(a.id)
    close()
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
