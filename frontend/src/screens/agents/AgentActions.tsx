import {useQueryClient} from '@tanstack/react-query'
import {toast} from 'sonner'
import {api, errorMessage, type Agent} from '../../api'
import {canResume, isLive} from '../../lib/status'
import {upsertAgent} from '../../state/queries'
import {useUI} from '../../state/ui'

/** Runs an engine call; a rejection becomes a toast with the engine's message. */
export function useAgentCall() {
  const qc = useQueryClient()
  return async (what: string, call: () => Promise<Agent | void>) => {
    try {
      const rec = await call()
      if (rec) upsertAgent(qc, rec)
    } catch (err) {
      toast.error(`Cannot ${what}`, {description: errorMessage(err)})
    }
  }
}

/** Start / stop / resume / edit / remove buttons for one agent. */
export function AgentActions({agent}: {agent: Agent}) {
  const run = useAgentCall()
  const open = useUI((s) => s.open)
  const live = isLive(agent)
  const p = agent.projectId
  const stopping = agent.status === 'stopping' || agent.status === 'killing'
  return (
    <span className="actions" onClick={(e) => e.stopPropagation()}>
      {!live && (
        <button type="button" onClick={() => run('start', () => api.agents.start(p, agent.id))}>Start</button>
      )}
      {live && (
        <button type="button" disabled={stopping} title={`SIGTERM, then SIGKILL after ${agent.graceSec} s`}
          onClick={() => run('stop', () => api.agents.stop(p, agent.id))}>Stop</button>
      )}
      {canResume(agent) && (
        <button type="button" onClick={() => run('resume', () => api.agents.resume(p, agent.id))}>Resume</button>
      )}
      {!live && (
        <button type="button" onClick={() => open({kind: 'editAgent', agentId: agent.id})}>Edit</button>
      )}
      <button type="button" className="danger" onClick={() => open({kind: 'removeAgent', agentId: agent.id})}>Remove</button>
    </span>
  )
}
