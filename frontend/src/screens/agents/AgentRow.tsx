import {memo} from 'react'
import type {Agent, RunResult} from '../../api'
import {attentionReason, costOf, isRestarting, runsOf} from '../../lib/groups'
import {activityText, briefDetail, isLive, restartText, runtimeText, statusView} from '../../lib/status'
import {ago, duration, exact} from '../../lib/time'
import {joinArgs} from '../../lib/args'
import {LockIcon} from '../../components/Icons'
import {RowActions} from './AgentActions'
import {StatusBadge} from './StatusBadge'

const money = (v?: number | null) => (v == null ? '' : v < 10 ? `$${v.toFixed(2)}` : `$${Math.round(v)}`)
const tokens = (n?: number | null) => (n == null ? '?' : n >= 10_000 ? `${Math.round(n / 1000)}k` : String(n))

function resultText(r: RunResult & {runs?: number | null}, what: string): string {
  const parts = [
    r.runs != null && `${r.runs} runs`,
    r.turns != null && `${r.turns} turns`,
    r.durationMs != null && duration(r.durationMs),
    r.costUsd != null && `$${r.costUsd.toFixed(4)}`,
    (r.inputTokens != null || r.outputTokens != null) &&
      `${tokens(r.inputTokens)} in (${tokens(r.cachedInputTokens)} cached) / ${tokens(r.outputTokens)} out tokens`,
  ].filter(Boolean)
  return parts.length ? `${what}: ${parts.join(', ')}` : ''
}

/** The runs cell's tooltip: every counter, in words. */
export function runsTitle(a: Agent): string {
  const lines = [
    `${runsOf(a)} run${runsOf(a) === 1 ? '' : 's'}${a.totals?.runs == null ? ' (counted from restarts and resumes)' : ''}`,
    `${a.restartCount} keep-alive restart${a.restartCount === 1 ? '' : 's'}${a.restartFailureCount ? ` (${a.restartFailureCount} failed in a row)` : ''}`,
    `${a.resumeCount} resume${a.resumeCount === 1 ? '' : 's'} in all; ${a.autoResumeCount} automatic since the last start by hand`,
  ]
  return lines.join('\n')
}

function whenCell(a: Agent, now: number): {text: string; title: string} {
  const title = [
    a.startedAt && `Started ${exact(a.startedAt)}`,
    a.stoppedAt && `Ended ${exact(a.stoppedAt)}`,
    a.lastActivityAt && `Last output ${exact(a.lastActivityAt)}`,
    `Created ${exact(a.createdAt)}`,
  ].filter(Boolean).join('\n')
  const t = isLive(a) || !a.stoppedAt ? a.startedAt : a.stoppedAt
  return {text: t ? ago(t, now) : '—', title}
}

interface Props {
  agent: Agent
  now: number
  selected: boolean
  cursor: boolean
  onSelect: (id: string) => void
}

/** One agent on one line: name and id, status with its reason, activity, times, runs, cost, actions. */
export const AgentRow = memo(function AgentRow({agent: a, now, selected, cursor, onSelect}: Props) {
  const v = statusView(a)
  // "Process exited with code 3" says no more than "exit code 3" on a crowded line; the tooltip has it all.
  const brief = briefDetail(v.detail)
  const restart = restartText(a, now)
  const why = attentionReason(a)
  const statusTitle = [`${v.label}${v.detail ? ` — ${v.detail}` : ''}`, restart, why && `Needs you: ${why}`]
    .filter(Boolean).join('\n')
  const when = whenCell(a, now)
  const cost = costOf(a)
  const costTitle = [a.lastResult && resultText(a.lastResult, 'Last run'), a.totals && resultText(a.totals, 'All runs')]
    .filter(Boolean).join('\n')
  const activity = activityText(a, now)
  const cls = [selected && 'selected', cursor && 'cursor'].filter(Boolean).join(' ') || undefined
  return (
    <tr data-agent={a.id} className={cls} aria-selected={selected} onClick={() => onSelect(a.id)}>
      <td className="c-agent" title={`${a.name ? `${a.name} (${a.id})` : a.id}\n${joinArgs([a.command, ...(a.args ?? [])])}`}>
        <span className="agent-name">{a.name || a.id}</span>
        {a.name && <span className="agent-id">{a.id}</span>}
        {a.permissions && (
          <span className="lock" title={`Sandboxed: ${a.permissions.length ? a.permissions.join(', ') : 'no network, no writes'}`}><LockIcon/></span>
        )}
      </td>
      <td className="c-status" title={statusTitle}>
        <StatusBadge agent={a} withDetail={false}/>
        {(restart || brief) && <span className="status-detail">{restart || brief}</span>}
      </td>
      <td className="c-activity" title={a.activity?.since ? `since ${exact(a.activity.since)}` : undefined}>
        {activity || (isRestarting(a) ? '' : <span className="muted">—</span>)}
      </td>
      <td className="c-runtime num">{runtimeText(a, now)}</td>
      <td className="c-when" title={when.title}>{when.text}</td>
      <td className="c-runs num" title={runsTitle(a)}>
        {runsOf(a)}{a.autoResumeCount > 0 && <span className="auto"> · {a.autoResumeCount}↻</span>}
      </td>
      <td className="c-cost num" title={costTitle || 'No cost reported'}>{money(cost) || <span className="muted">—</span>}</td>
      <td className="c-actions"><RowActions agent={a}/></td>
    </tr>
  )
})
