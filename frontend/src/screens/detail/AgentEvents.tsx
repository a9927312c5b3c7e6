import {clock} from '../../lib/time'
import {useAgentEvents} from '../../state/queries'

/** The agent's lines of the project's events.jsonl, newest first. */
export function AgentEvents({projectId, agentId}: {projectId: string; agentId: string}) {
  const {data: events = [], error} = useAgentEvents(projectId, agentId)
  if (error) return <p className="field-error">{String(error)}</p>
  if (events.length === 0) return <p className="muted log-empty">No events yet.</p>
  return (
    <ol className="events">
      {events.slice().reverse().map((e, i) => (
        <li key={i}>
          <span className="ev-time">{clock(e.time)}</span>
          <span className="ev-name">{e.event}</span>
          {(e.from || e.to) && <span>{e.from || '·'} → {e.to || '·'}</span>}
          {e.reason && <span className="muted">{e.reason}</span>}
          {e.data && <code className="ev-data">{JSON.stringify(e.data)}</code>}
        </li>
      ))}
    </ol>
  )
}
