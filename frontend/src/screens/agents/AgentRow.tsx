import {memo} from 'react'
import type {Agent, RunResult} from '../../api'
import {attentionReason, costOf, inCrashLoop, isRestarting, runsOf, statsOf} from '../../lib/groups'
import {grantsTitle} from '../../lib/sandbox'
import {activityText, briefDetail, crashLoopText, isLive, restartText, runtimeText, statusView, waitingView} from '../../lib/status'
import {ago, exact} from '../../lib/time'
import {cpuText, figuresText, memText, mib, money} from '../../lib/usage'
import {joinArgs} from '../../lib/args'
import {budgetReached, limitsText, spendText, withBudgetFlags} from '../../lib/budget'
import {LockIcon} from '../../components/Icons'
import type {ColumnId} from './columns'
import {RowActions} from './AgentActions'
import {StatusBadge} from './StatusBadge'

function resultText(r: RunResult & {runs?: number | null}, what: string): string {
  const text = figuresText(r)
  return text ? `${what}: ${text}` : ''
}

/** The CPU and memory cells' tooltip. */
function statsTitle(a: Agent): string {
  const s = statsOf(a)
  if (!s) return isLive(a) ? 'Not sampled yet' : 'Not running'
  return [
    s.cpuPercent != null ? `CPU ${s.cpuPercent.toFixed(1)}% of one core` : 'CPU: known from the second sample',
    s.rssBytes != null && `Memory ${mib(s.rssBytes)} resident`,
    s.processes != null && `${s.processes} process${s.processes === 1 ? '' : 'es'}`,
    s.sampledAt && `Sampled ${exact(s.sampledAt)}`,
  ].filter(Boolean).join('\n')
}

/** The runs cell's tooltip: every counter, in words. */
export function runsTitle(a: Agent, seen = 0): string {
  const n = runsOf(a, seen)
  if (!n) return 'Never run'
  const lines = [
    `${n} run${n === 1 ? '' : 's'} started`,
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
  return {text: t && a.startedAt ? ago(t, now) : '—', title: a.startedAt ? title : `Never run\n${title}`}
}

interface Props {
  agent: Agent
  now: number
  selected: boolean
  cursor: boolean
  /** The row in the Tab order (the list's one), with its buttons. */
  entry?: boolean
  /** Its place in its group (read as "2 of 5"). */
  at?: number
  of?: number
  onSelect: (id: string) => void
  /** The columns shown (all when not given). */
  cols?: ReadonlySet<ColumnId>
  /** Runs its recent events show (the Runs column counts them, as the detail's run picker does). */
  seenRuns?: number
}

/**
 * One agent on one line: name and id, status with its reason, activity,
 * times, runs, cost, actions. A row of the list's treegrid: the row and each
 * cell take the focus (the actions cell's buttons, rather than the cell).
 */
export const AgentRow = memo(function AgentRow({agent: a, now, selected, cursor, entry = false, at, of, onSelect, cols, seenRuns = 0}: Props) {
  const has = (c: ColumnId) => !cols || cols.has(c)
  const v = statusView(a)
  // "Process exited with code 3" says no more than "exit code 3" on a crowded line; the tooltip has it all.
  const brief = briefDetail(v.detail)
  const restart = restartText(a, now)
  const why = attentionReason(a, now)
  // An acknowledged crash loop is out of Needs you but still counts in its row.
  const loopAcked = !why && inCrashLoop(a)
  const loop = crashLoopText(why || (loopAcked ? 'crash loop' : ''), a, now)
  const waiting = waitingView(a, now)
  const statusTitle = [`${v.label}${v.detail ? ` — ${v.detail}` : ''}`, restart, why && `Needs you: ${why}`]
    .filter(Boolean).join('\n')
  const when = whenCell(a, now)
  const cost = costOf(a)
  const costTitle = [a.lastResult && resultText(a.lastResult, 'Last run'), a.totals && resultText(a.totals, 'All runs')]
    .filter(Boolean).join('\n')
  const activity = activityText(a, now)
  const stats = statsOf(a)
  const usage = statsTitle(a)
  const cls = [selected && 'selected', cursor && 'cursor'].filter(Boolean).join(' ') || undefined
  return (
    <tr role="row" data-agent={a.id} data-tip-head={a.name || a.id} className={cls} aria-selected={selected} aria-level={2}
      aria-posinset={at} aria-setsize={of} tabIndex={entry ? 0 : -1} data-focus-home={entry || undefined}
      onClick={() => onSelect(a.id)}>
      <td role="rowheader" tabIndex={-1} className="c-agent" title={`${a.name ? `${a.name} (${a.id})` : a.id}\n${joinArgs([a.command, ...withBudgetFlags(a, a.args ?? [])])}`}>
        <span className="agent-cell">
          <span className="agent-name">{a.name || a.id}</span>
          {a.name && <span className="agent-id">{a.id}</span>}
          {a.sandbox && <span className="lock" data-sandboxed title={grantsTitle(a.sandbox)}><LockIcon/></span>}
          {a.parent && <span className="agent-id" data-parent title={`created by agent ${a.parent}, which controls it`}>by {a.parent}</span>}
        </span>
      </td>
      {/* Waiting and a crash loop say more than "running" or "failed": the icon stays, their words take the cell. */}
      <td role="gridcell" tabIndex={-1} className={loop || waiting ? 'c-status compact' : 'c-status'} title={[statusTitle, waiting?.title].filter(Boolean).join('\n')}>
        <StatusBadge agent={a} withDetail={false}/>
        {waiting
          ? <span className={waiting.needsYou ? 'waiting needs-you' : 'waiting calm'} data-waiting={waiting.needsYou ? 'you' : 'calm'}>
              {/* In a narrow window the activity's "waiting 2 s" says the first word. */}
              <span className="w-prefix">waiting: </span>{waiting.text.replace(/^waiting: /, '')}
            </span>
          : loop
            ? <span className={loopAcked ? 'status-detail crash-loop acked' : 'status-detail crash-loop'} data-crash-loop={loopAcked ? 'acknowledged' : ''}>{loop}</span>
            : (restart || brief) && <span className="status-detail">{restart || brief}</span>}
      </td>
      <td role="gridcell" tabIndex={-1} className={waiting ? `c-activity ${waiting.needsYou ? 'act-you' : 'act-calm'}` : 'c-activity'}
        title={waiting?.title ?? (a.activity?.since ? `since ${exact(a.activity.since)}` : undefined)}>
        {activity || (isRestarting(a) ? '' : <span className="muted">—</span>)}
      </td>
      <td role="gridcell" tabIndex={-1} className="c-runtime num" title={has('when') ? undefined : when.title}>{runtimeText(a, now)}</td>
      {has('when') && <td role="gridcell" tabIndex={-1} className="c-when" title={when.title}>{when.text}</td>}
      <td role="gridcell" tabIndex={-1} className="c-runs num" title={runsTitle(a, seenRuns)}>
        {runsOf(a, seenRuns) || <span className="muted">—</span>}{a.autoResumeCount > 0 && <span className="auto"> · {a.autoResumeCount}↻</span>}
      </td>
      {has('cost') && (
        <td role="gridcell" tabIndex={-1} className={budgetReached(a) ? 'c-cost num over' : 'c-cost num'} data-spend={spendText(a) || undefined}
          title={[limitsText(a) && `Budget: ${limitsText(a)}`, costTitle || 'No cost reported'].filter(Boolean).join('\n')}>
          {spendText(a) || money(cost) || <span className="muted">—</span>}
        </td>
      )}
      {has('cpu') && <td role="gridcell" tabIndex={-1} className="c-cpu num" title={usage}>{cpuText(stats?.cpuPercent)}</td>}
      {has('mem') && <td role="gridcell" tabIndex={-1} className="c-mem num" title={usage}>{memText(stats?.rssBytes)}</td>}
      <td role="gridcell" tabIndex={-1} className="c-actions"><RowActions agent={a} tabbable={entry}/></td>
    </tr>
  )
})
