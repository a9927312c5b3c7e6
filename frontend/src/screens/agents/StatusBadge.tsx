import type {ReactNode} from 'react'
import type {Agent} from '../../api'
import {statusView} from '../../lib/status'
import {PauseIcon, TimerIcon} from '../../components/Icons'

// Glyphs many desktop fonts lack, drawn instead.
const DRAWN: Record<string, ReactNode> = {'⏸': <PauseIcon/>, '⏱': <TimerIcon/>}

/** The status icon and word, coloured per status and exit reason, with the reason's sentence. */
export function StatusBadge({agent, withDetail = true, title}: {agent: Agent; withDetail?: boolean; title?: boolean}) {
  const v = statusView(agent)
  return (
    <span className={`status tone-${v.tone}`} data-status={agent.status}
      title={title && v.detail ? `${v.label} — ${v.detail}` : undefined /* whole, where a narrow head cuts it */}>
      <span className="status-icon" aria-hidden="true">{DRAWN[v.icon] ?? v.icon}</span>
      <span className="status-label">{v.label}</span>
      {!agent.attached && agent.status !== 'not_started' && (
        <span className="badge" title="Adopted from an earlier run of Shepherd">re-attached</span>
      )}
      {agent.stale && agent.status === 'running' && (
        <span className="badge" title="No log output for longer than the stale threshold; it cannot be resumed, so it was left running">
          stale
        </span>
      )}
      {withDetail && v.detail && <span className="status-detail">{v.detail}</span>}
    </span>
  )
}
