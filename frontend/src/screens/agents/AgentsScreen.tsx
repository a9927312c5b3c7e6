import {useEffect, useMemo} from 'react'
import {toast} from 'sonner'
import {api, errorMessage, type Project} from '../../api'
import {isLive} from '../../lib/status'
import {useAgents} from '../../state/queries'
import {useUI} from '../../state/ui'
import {AgentDetail} from '../detail/AgentDetail'
import {AgentList} from './AgentList'

/** The selected project: its agents, the actions on all of them, and one agent's detail. */
export function AgentsScreen({project}: {project: Project}) {
  const {agentId, selectAgent, open, filter, setFilter} = useUI()
  const {data: agents = [], isLoading, error} = useAgents(project.id)
  const q = filter.trim().toLowerCase()
  const shown = useMemo(() => (q
    ? agents.filter((a) => `${a.id} ${a.name ?? ''} ${a.command} ${a.status}`.toLowerCase().includes(q))
    : agents), [agents, q])
  const selected = agents.find((a) => a.id === agentId)
  const live = agents.filter(isLive).length

  useEffect(() => {
    api.setTitle(`Shepherd — ${project.name} · ${agents.length} agent${agents.length === 1 ? '' : 's'}`)
  }, [project.name, agents.length])

  const stopAll = async () => {
    try {
      const res = await api.agents.stopAll(project.id)
      const failed = res.filter((r) => r.error)
      if (failed.length) toast.error(`${failed.length} agent(s) did not stop`, {description: failed.map((f) => f.error).join('\n')})
      else toast.success(`Stopped ${res.length} agent${res.length === 1 ? '' : 's'}`)
    } catch (err) {
      toast.error('Cannot stop all', {description: errorMessage(err)})
    }
  }

  return (
    <main className="main">
      <header className="main-head">
        <div>
          <h1>{project.name}</h1>
          <span className="muted">{project.path}</span>
        </div>
        <input type="search" data-search="agents" placeholder="Filter agents  /" aria-label="Filter agents"
          value={filter} onChange={(e) => setFilter(e.target.value)}/>
        <button type="button" className="primary" onClick={() => open({kind: 'createAgent'})}>New agent</button>
        <button type="button" disabled={live === 0} onClick={stopAll}>Stop all{live ? ` (${live})` : ''}</button>
        <button type="button" onClick={() => open({kind: 'settings'})}>Settings</button>
      </header>
      {error && <p className="field-error">{errorMessage(error)}</p>}
      {!isLoading && agents.length === 0 && (
        <div className="empty-agents">
          <p>No agents in this project yet. An agent is a command Shepherd runs and watches — Claude Code or anything else.</p>
          <button type="button" className="primary" onClick={() => open({kind: 'createAgent'})}>Create the first agent</button>
        </div>
      )}
      {agents.length > 0 && (
        <div className="list-wrap">
          <AgentList agents={shown} selectedId={agentId} onSelect={selectAgent}/>
        </div>
      )}
      {selected && <AgentDetail key={selected.id} agent={selected} onClose={() => selectAgent(null)}/>}
    </main>
  )
}
