import {useState} from 'react'
import type {Agent} from '../../api'
import {AgentActions} from '../agents/AgentActions'
import {StatusBadge} from '../agents/StatusBadge'
import {AgentEvents} from './AgentEvents'
import {LogView} from './LogView'
import {RecordFields} from './RecordFields'
import {StreamView} from './StreamView'
import {useLogLines} from './useLogLines'

type Tab = 'log' | 'record' | 'events'

/** One agent: its live log (readable or raw), its record and its events. */
export function AgentDetail({agent, onClose}: {agent: Agent; onClose: () => void}) {
  const [tab, setTab] = useState<Tab>('log')
  const [raw, setRaw] = useState(false)
  const [search, setSearch] = useState('')
  const {lines, error} = useLogLines(agent.projectId, agent.id)
  const stream = agent.profile === 'claude-stream-json'
  return (
    <section className="detail" aria-label={`Agent ${agent.id}`}>
      <header className="detail-head">
        <h2>{agent.name || agent.id}</h2>
        <StatusBadge agent={agent}/>
        <AgentActions agent={agent}/>
        <button type="button" className="icon" aria-label="Close detail" onClick={onClose}>×</button>
      </header>
      <div className="tabs" role="tablist">
        {(['log', 'record', 'events'] as Tab[]).map((t) => (
          <button key={t} type="button" role="tab" aria-selected={tab === t} onClick={() => setTab(t)}>
            {t === 'log' ? 'Log' : t === 'record' ? 'Record' : 'Events'}
          </button>
        ))}
        {tab === 'log' && (
          <span className="tab-tools">
            {stream && (
              <label className="check"><input type="checkbox" checked={raw} onChange={(e) => setRaw(e.target.checked)}/> Raw</label>
            )}
            {(!stream || raw) && (
              <input type="search" data-search="log" placeholder="Search the log  /" aria-label="Search the log"
                value={search} onChange={(e) => setSearch(e.target.value)}/>
            )}
          </span>
        )}
      </div>
      {tab === 'log' && error && <p className="field-error">{error}</p>}
      {tab === 'log' && (stream && !raw ? <StreamView lines={lines}/> : <LogView lines={lines} search={search}/>)}
      {tab === 'record' && <RecordFields agent={agent}/>}
      {tab === 'events' && <AgentEvents projectId={agent.projectId} agentId={agent.id}/>}
    </section>
  )
}
