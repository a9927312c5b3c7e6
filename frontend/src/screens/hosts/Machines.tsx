import type {ReactNode} from 'react'
import type {Host} from '../../api'
import {hostStateText} from '../../lib/hosts'
import {useHosts} from '../../state/queries'
import {useUI} from '../../state/ui'

/**
 * The machines in the sidebar: this computer and each host with its state,
 * the projects of the one shown under it. With no hosts, only the projects
 * (as before hosts existed).
 */
export function Machines({children}: {children: ReactNode}) {
  const {data: hosts = []} = useHosts()
  const {host, selectHost, open} = useUI()
  if (hosts.length === 0 && host === null) return <>{children}</>
  return (
    <ul className="machines" aria-label="Machines">
      <li className="machine-item">
        <button type="button" className={host === null ? 'machine selected' : 'machine'} aria-current={host === null ? 'true' : undefined}
          onClick={() => selectHost(null)}>
          <span className="machine-name">This computer</span>
        </button>
        {host === null && children}
      </li>
      {hosts.map((h) => (
        <li key={h.name} className="machine-item">
          <button type="button" className={h.name === host ? 'machine selected' : 'machine'} data-host={h.name} data-state={h.state}
            aria-current={h.name === host ? 'true' : undefined} title={hostTitle(h)} onClick={() => selectHost(h.name)}>
            <span className="machine-name">{h.name}</span>
            <span className={`host-state ${h.state}`} data-host-state={h.state}>{hostStateText(h)}</span>
            <span className="host-counts">
              {h.agents} agent{h.agents === 1 ? '' : 's'}
              {h.needsYou > 0 && <span className="attention" title="Agents in Needs you"> ⚠ {h.needsYou}</span>}
            </span>
          </button>
          {h.name === host && (
            <>
              <span className="project-actions">
                {h.whileAway && <button type="button" className="link" onClick={() => open({kind: 'hostAway', host: h.name})}>While away…</button>}
                <button type="button" className="link danger" onClick={() => open({kind: 'removeHost', host: h.name})}>Remove host</button>
              </span>
              {h.state === 'connected' ? children : <p className="muted host-away-note">{awayNote(h)}</p>}
            </>
          )}
        </li>
      ))}
    </ul>
  )
}

function hostTitle(h: Host): string {
  const lines = [h.url]
  if (h.version) lines.push(`engine ${h.version}${h.pid ? ` (pid ${h.pid})` : ''}`)
  if (h.error) lines.push(h.error)
  return lines.join('\n')
}

/** What the window says of a host it cannot reach: its agents run on there. */
function awayNote(h: Host): string {
  switch (h.state) {
    case 'connecting': return 'Connecting…'
    case 'needs-newer-engine': return `This Shepherd has no engine for that machine. ${h.error ?? ''}`
    case 'refused': return h.error ?? 'Refused.'
    default: return `Its agents keep running there under its own engine; what happens meanwhile is shown when it is back.${h.error ? ` (${h.error})` : ''}`
  }
}
