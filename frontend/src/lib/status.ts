// How an agent's status and exit reason are shown: one place, so the list,
// the detail and the tests agree.
import {LIVE, type Agent} from '../api'
import {pausedDetail, queuedFor, queueLabel} from './pause'
import {clock, duration, exact, inTime, parseTime, short} from './time'

export type Tone = 'ok' | 'bad' | 'warn' | 'live' | 'idle'

export interface StatusView {
  icon: string
  tone: Tone
  label: string
  /** A sentence about how the run ended, when there is more to say. */
  detail?: string
}

const LABELS: Record<string, string> = {
  not_started: 'not started', spawning: 'starting', running: 'running', timed_out: 'timed out',
  stopping: 'stopping', killing: 'killing', completed: 'completed', failed: 'failed',
  stopped: 'stopped', interrupted: 'interrupted', paused: 'paused', queued: 'queued',
}

function exitPart(a: Agent): string {
  if (a.exitCode !== undefined && a.exitCode !== null) return `exit code ${a.exitCode}`
  if (a.signal) return `killed by ${a.signal}`
  return ''
}

export function statusView(a: Agent): StatusView {
  const label = LABELS[a.status] ?? a.status
  const code = exitPart(a)
  switch (a.exitReason) {
    case 'exited_while_app_closed':
      return {icon: '⚠', tone: 'warn', label,
        detail: `exited while Shepherd was closed — ${code || 'reason unknown'}`}
    case 'orphaned':
      return {icon: '⚠', tone: 'warn', label, detail: 'process vanished — detected by watchdog'}
    case 'pid_reused':
      return {icon: '⚠', tone: 'warn', label, detail: 'its pid now belongs to another process (pid reused)'}
    case 'resume_limit':
      return {icon: '✖', tone: 'bad', label, detail: 'auto-resume limit reached'}
    case 'stale':
      return {icon: '⚠', tone: 'warn', label, detail: 'silent too long (stale)'}
    case 'timed_out':
      return {icon: '⏱', tone: 'warn', label, detail: a.error || 'timed out'}
    case 'crashed':
      return {icon: '✖', tone: 'bad', label, detail: `crashed${code ? ` (${code})` : ''}`}
  }
  // A start that failed keeps the status it had, with the error, until the next start.
  if (a.error && ['not_started', 'stopped', 'completed', 'paused'].includes(a.status)) {
    return {icon: '✖', tone: 'bad', label: 'could not start', detail: a.error}
  }
  switch (a.status) {
    case 'queued':
      return {icon: '◷', tone: 'live', label: queueLabel(a), detail: queuedFor(a.queuedAction) || undefined}
    case 'completed':
      return {icon: '✔', tone: 'ok', label, detail: code || undefined}
    case 'failed':
      return {icon: '✖', tone: 'bad', label, detail: a.error || code || undefined}
    case 'interrupted':
      return {icon: '⚠', tone: 'warn', label, detail: a.error || undefined}
    case 'stopped':
      return {icon: '■', tone: 'idle', label, detail: a.exitReason === 'stopped_by_user' ? 'stopped by user' : undefined}
    case 'paused':
      if (a.budgetPause) return {icon: '⏸', tone: 'warn', label: 'budget reached', detail: pausedDetail(a) || undefined}
      return {icon: '⏸', tone: 'idle', label, detail: pausedDetail(a) || undefined}
    case 'not_started':
      return {icon: '○', tone: 'idle', label}
  }
  if (LIVE.has(a.status)) return {icon: '●', tone: 'live', label}
  return {icon: '?', tone: 'idle', label}
}

/** Run time: live for a running agent, start→stop for an ended one, "unknown" where it is. */
export function runtimeText(a: Agent, now = Date.now()): string {
  const start = parseTime(a.startedAt)
  if (start === null) return '—' // never run
  if (LIVE.has(a.status)) return duration(now - start)
  const stop = parseTime(a.stoppedAt)
  if (stop === null || stop < start) return 'unknown'
  return duration(stop - start)
}

/** "restarting in 8 s" for a keep-alive agent waiting for its next try. */
export function restartText(a: Agent, now = Date.now()): string {
  if (!a.nextRestartAt || LIVE.has(a.status)) return ''
  const when = inTime(a.nextRestartAt, now)
  return when ? `restarting ${when}` : ''
}

export const isLive = (a: Agent) => LIVE.has(a.status)
export const canResume = (a: Agent) =>
  !LIVE.has(a.status) && !!a.sessionId && (a.resumeArgs?.length ?? 0) > 0

/** What the agent is doing now: "busy · Bash 6 min", "silent 3 min", "active"; '' for an agent not running. */
export function activityText(a: Agent, now = Date.now()): string {
  const since = (t?: string | null) => {
    const ms = parseTime(t)
    return ms === null ? '' : short(now - ms)
  }
  if (!LIVE.has(a.status)) return ''
  const act = a.activity
  if (act) {
    switch (act.state) {
      case 'busy':
        return act.tool ? `busy · ${act.tool} ${since(act.toolSince ?? act.since)}`.trim() : `busy ${since(act.since)}`.trim()
      case 'working': return 'working'
      case 'silent': return `silent ${since(act.since)}`.trim()
      case 'stale': return `stale · silent ${since(act.since)}`.trim()
      case 'waiting': return `waiting ${since(act.since)}`.trim()
    }
    return act.state
  }
  const last = parseTime(a.lastActivityAt)
  if (last === null) return ''
  return now - last < 30_000 ? 'active' : `silent ${short(now - last)}`
}

/** A status sentence short enough for a row: the engine's long messages trimmed to what matters. */
export function briefDetail(detail?: string): string | undefined {
  if (!detail) return detail
  return detail
    .replace(/^Process exited with code (-?\d+)$/, 'exit code $1')
    .replace(/^exit code 0$/, '')
    .replace(/^Failed to start process '[^']*': /, '')
    .replace(/exec: "([^"]+)": executable file not found in \$PATH/, '$1 not found on PATH')
    .replace(/^Process '[^']*' is not started: (sandbox unavailable: )/, '$1')
}

export interface WaitingView {
  /** "waiting: permission for Bash", "waiting: rate limit until 14:05:00". */
  text: string
  /** For the user (a permission, input): attention-coloured; a rate limit is calm. */
  needsYou: boolean
  title: string
}

/** A running agent that waits: for the user, or for a rate limit to pass; null when it does not wait. */
export function waitingView(a: Agent, now = Date.now()): WaitingView | null {
  const act = a.activity
  if (act?.state !== 'waiting' || !LIVE.has(a.status)) return null
  const what = act.waiting || (act.needsYou ? 'you' : 'the API')
  const until = act.until && !/\buntil\b/.test(what) ? ` until ${clock(act.until).replace(/^.*, /, '')}` : ''
  const text = `waiting: ${what}${until}`
  const since = parseTime(act.since)
  const title = [
    act.needsYou ? `It waits for you: ${what}. Answer it in its terminal or session; Acknowledge takes it out of Needs you.`
      : 'Rate-limited or overloaded: not hung, not killed; it goes on by itself.',
    act.until && `Until ${exact(act.until)} (${inTime(act.until, now)})`,
    since !== null && `Waiting for ${short(now - since)}`,
  ].filter(Boolean).join('\n')
  return {text, needsYou: !!act.needsYou, title}
}

/** "crash loop ×5 · retry in 8 s" for a keep-alive agent that keeps crashing (short, for a row); '' otherwise. */
export function crashLoopText(reason: string, a: Agent, now = Date.now()): string {
  if (!reason.startsWith('crash loop')) return ''
  const next = !LIVE.has(a.status) && a.nextRestartAt ? inTime(a.nextRestartAt, now) : ''
  return [`crash loop ×${a.restartFailureCount}`, next && (next === 'now' ? 'restarting' : `retry ${next}`)]
    .filter(Boolean).join(' · ')
}
