import {useEffect, useState} from 'react'
import type {Agent} from '../../api'
import {restartText, runtimeText} from '../../lib/status'
import {ago, clock} from '../../lib/time'
import {AgentActions} from './AgentActions'
import {StatusBadge} from './StatusBadge'

/** Re-renders every second while something on screen counts time. */
function useNow(active: boolean) {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    if (!active) return
    const t = setInterval(() => setNow(Date.now()), 1000)
    return () => clearInterval(t)
  }, [active])
  return now
}

interface Props {
  agents: Agent[]
  selectedId: string | null
  onSelect: (id: string) => void
  now?: number
}

/** The agents of the selected project, one row each. */
export function AgentList({agents, selectedId, onSelect, now: fixedNow}: Props) {
  const ticking = useNow(fixedNow === undefined && agents.length > 0)
  const now = fixedNow ?? ticking
  return (
    <table className="agents" aria-label="Agents">
      <thead>
        <tr>
          <th>Agent</th><th>Status</th><th>Runtime</th><th>PID</th><th>Started</th><th>Stopped</th>
          <th>Exit</th><th>Last activity</th><th title="restarts / auto-resumes">Restarts</th><th/>
        </tr>
      </thead>
      <tbody>
        {agents.map((a) => (
          <tr key={a.id} data-agent={a.id} className={a.id === selectedId ? 'selected' : undefined}
            onClick={() => onSelect(a.id)} aria-selected={a.id === selectedId}>
            <td>
              <span className="agent-name">{a.name || a.id}</span>
              <span className="agent-cmd">{[a.command, ...(a.args ?? [])].join(' ')}</span>
            </td>
            <td>
              <StatusBadge agent={a}/>
              {restartText(a, now) && <span className="status-detail">{restartText(a, now)}</span>}
            </td>
            <td className="num">{runtimeText(a, now)}</td>
            <td className="num">{a.pid || '—'}</td>
            <td>{clock(a.startedAt)}</td>
            <td>{clock(a.stoppedAt)}</td>
            <td className="num">{a.exitCode ?? (a.signal || '—')}</td>
            <td>{ago(a.lastActivityAt, now)}</td>
            <td className="num" title={`${a.restartCount} restarts, ${a.autoResumeCount} auto-resumes, ${a.resumeCount} resumes`}>
              {a.restartCount} / {a.autoResumeCount}
            </td>
            <td><AgentActions agent={a}/></td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
