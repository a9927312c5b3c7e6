// The activity feed: the lines of events.jsonl that a person wants to know
// about (failures, recoveries, automatic restarts, timeouts…), in words, and
// what is unread (kept on this machine: the last time the feed was seen).
import type {EngineEvent} from '../api'
import {parseTime} from './time'

export type Level = 'error' | 'warning' | 'success' | 'info'

export interface FeedEntry {
  key: string
  time: string
  projectId: string
  agentId?: string
  level: Level
  title: string
  reason?: string
  /** Something the user did: shown, but not counted as unread. */
  byUser: boolean
}

const num = (v: unknown) => (typeof v === 'number' ? v : undefined)
const str = (v: unknown) => (typeof v === 'string' ? v : undefined)

/** How a run ended, from a transition's data (exitReason, exitCode, signal). */
export function endText(e: EngineEvent): string {
  const d = e.data ?? {}
  const code = num(d.exitCode)
  const signal = str(d.signal)
  const codeText = code !== undefined ? `exit code ${code}` : signal ? `killed by ${signal}` : ''
  switch (str(d.exitReason)) {
    case 'completed': return code !== undefined && code !== 0 ? `completed (${codeText})` : 'completed'
    case 'stopped_by_user': return 'stopped by user'
    case 'timed_out': return 'timed out'
    case 'crashed': return `crashed${codeText ? ` (${codeText})` : ''}`
    case 'exited_while_app_closed': return `exited while Shepherd was closed — ${codeText || 'reason unknown'}`
    case 'pid_reused': return 'lost: its pid belongs to another process'
    case 'orphaned': return 'vanished — detected by watchdog'
    case 'stale': return 'silent too long; killed'
    case 'resume_limit': return 'auto-resume limit reached'
    case 'paused': return 'paused'
    case 'expired': return 'paused too long; expired'
    case 'failed': return codeText ? `failed — ${codeText}` : 'failed'
  }
  if (e.to === 'completed') return 'completed'
  if (e.to === 'failed') return codeText ? `failed — ${codeText}` : 'failed'
  if (e.to === 'stopped') return e.reason === 'stopped_by_user' ? 'stopped by user' : 'stopped'
  if (e.to === 'interrupted') return 'interrupted'
  return e.to ?? ''
}

export const RECOVERY: Record<string, [Level, string]> = {
  resume: ['warning', 'auto-resumed'],
  resume_limit: ['error', 'auto-resume limit reached; gave up'],
  mark_completed: ['success', 'marked completed from its log'],
  mark_failed: ['error', 'marked failed from its log'],
  stay_interrupted: ['warning', 'left interrupted: cannot be resumed'],
  notify_stale_alive: ['warning', 'silent; cannot be resumed, left running'],
}

const FOUND: Record<string, string> = {stale: 'silent too long', dead: 'found dead'}

/** Why the engine started a run, from a transition's reason. */
export function causeText(reason?: string): string {
  switch (reason) {
    case 'start': return 'started by you'
    case 'resume': return 'resumed by you'
    case 'auto-resume': return 'auto-resumed'
    case 'keep-alive restart': return 'restarted by keep-alive'
    case 'auto start on restore': return 'started when the project opened'
    case 'unpause': return 'resumed after a pause'
  }
  if (reason?.startsWith('sync')) return 'picked up when Shepherd started'
  return reason ? reason : 'started'
}

/** One event in words, or null for the ones the feed leaves out (spawning, stopping…). */
export function describe(e: EngineEvent, projectId: string, index: number): FeedEntry | null {
  const base = {key: `${projectId}:${e.time}:${index}`, time: e.time, projectId, agentId: e.agentId, byUser: false}
  const d = e.data ?? {}
  switch (e.event) {
    case 'transition':
      if (e.to === 'failed') return {...base, level: 'error', title: 'failed', reason: endText(e).replace(/^failed(?: — )?/, '') || undefined}
      if (e.to === 'interrupted') return {...base, level: 'warning', title: 'interrupted', reason: endText(e)}
      if (e.to === 'completed') return {...base, level: 'success', title: 'completed', reason: endText(e) === 'completed' ? undefined : endText(e)}
      if (e.to === 'stopped') {
        const user = str(d.exitReason) === 'stopped_by_user'
        return {...base, level: user ? 'info' : 'warning', title: endText(e), byUser: user}
      }
      // Auto-resumes and keep-alive restarts are told by their recovery and
      // keep-alive:scheduled lines; one line per automatic action.
      if (e.to === 'spawning' && e.reason === 'auto start on restore') {
        return {...base, level: 'info', title: causeText(e.reason)}
      }
      // Pauses and queueing: traced, but the user's own doing unless a file or a limit did it.
      if (e.to === 'paused' && e.reason === 'budget') return null // its budget:reached line tells it
      if (e.to === 'paused') {
        return {...base, level: 'info', title: 'paused', reason: str(d.pauseNote) || undefined, byUser: true}
      }
      if (e.to === 'queued') {
        return {...base, level: 'info', title: 'queued', reason: e.reason?.replace(/^queued: /, 'waits to ') || undefined, byUser: true}
      }
      return null
    case 'recovery': {
      const [level, title] = RECOVERY[str(d.action) ?? ''] ?? ['warning', `recovery: ${str(d.action) ?? 'unknown'}`]
      const found = FOUND[str(d.found) ?? ''] ?? str(d.found)
      const count = num(d.autoResumeCount)
      const parts = [found, str(d.verdict) && `log: ${str(d.verdict)}`, count ? `${count} auto-resume${count === 1 ? '' : 's'} so far` : '']
      return {...base, level, title, reason: parts.filter(Boolean).join(' · ')}
    }
    case 'keep-alive:scheduled': {
      const at = parseTime(str(d.at))
      const secs = at !== null ? Math.max(0, Math.round((at - Date.parse(e.time)) / 1000)) : undefined
      const fails = num(d.failures)
      return {...base, level: 'info', title: `restart scheduled${secs !== undefined ? ` in ${secs} s` : ''}`,
        reason: fails ? `${fails} failure${fails === 1 ? '' : 's'} in a row` : undefined}
    }
    case 'budget:reached':
      return {...base, level: 'warning', title: e.agentId ? 'budget reached; paused' : 'daily budget reached; agents paused, starts held',
        reason: e.reason || undefined}
    case 'budget:answer': {
      const action = str(d.action)
      const title = action === 'raise' ? `budget raised${num(d.limit) ? ` to ${num(d.limit)}` : ' (no limit)'}`
        : action === 'once' ? 'resumed once past its budget' : 'stopped at its budget'
      return {...base, level: 'info', title, byUser: true}
    }
    case 'budget:daily-lifted':
      return {...base, level: 'info', title: 'daily budget lifted; paused agents resume'}
    case 'auto-execution:timeout':
      return {...base, level: 'warning', title: 'timed out', reason: num(d.timeoutSec) ? `after ${num(d.timeoutSec)} s; stopping` : undefined}
    case 'result-grace:stop':
      return {...base, level: 'info', title: 'stopped after its result', reason: 'still running after writing its result line'}
    case 'watchdog:kill':
      return {...base, level: 'warning', title: 'killed a leftover process', reason: `pid ${num(d.pid) ?? '?'} was alive for a ${str(d.status) ?? 'finished'} agent`}
    case 'record:corrupt':
      return {...base, level: 'error', title: 'unreadable record moved aside', reason: e.reason || str(d.problem)}
    case 'start:failed':
      return {...base, level: 'error', title: 'could not start', reason: e.reason}
    case 'project:paused': {
      const byFile = e.reason !== 'pause'
      const note = str(d.note)
      return {...base, agentId: undefined, level: byFile ? 'warning' : 'info', title: 'project paused', byUser: !byFile,
        reason: [byFile ? e.reason : '', note && `“${note}”`].filter(Boolean).join(' · ') || undefined}
    }
    case 'project:unpaused':
      return {...base, agentId: undefined, level: 'info', title: 'project unpaused', byUser: e.reason === 'unpause',
        reason: e.reason === 'unpause' ? undefined : e.reason}
    case 'pause:safe-point':
      return {...base, level: 'info', title: 'pausing after its tool call', byUser: true,
        reason: str(d.tool) ? `${str(d.tool)} in flight; at most ${num(d.limitSec) ?? '?'} s` : e.reason}
    case 'stop-all':
      return {...base, level: 'info', title: `stop all: ${num(d.agents) ?? 0} agents`, byUser: true}
    case 'removed':
      return {...base, level: 'info', title: 'removed', byUser: true}
    case 'reattached':
      return {...base, level: 'info', title: 're-attached: still running after Shepherd restarted', reason: num(d.pid) ? `pid ${num(d.pid)}` : undefined}
    case 'waiting': {
      // A Claude hook (permission, input) waits for the user; a rate limit or an overload does not.
      const what = e.reason ?? str(d.waiting) ?? ''
      const forYou = !!str(d.hook) && !/rate limit|overload/i.test(what)
      return {...base, level: forYou ? 'warning' : 'info', title: `waiting: ${what}`.trim()}
    }
    case 'attention:acknowledged':
      return {...base, level: 'info', title: 'acknowledged', reason: e.reason, byUser: true}
  }
  return null
}

/** A project's events as feed entries, newest first. */
export function feedOf(events: readonly EngineEvent[], projectId: string): FeedEntry[] {
  const out: FeedEntry[] = []
  events.forEach((e, i) => {
    const f = describe(e, projectId, i)
    if (f) out.push(f)
  })
  return out.reverse()
}

/** Entries of several projects in one list, newest first. */
export function mergeFeeds(feeds: readonly FeedEntry[][]): FeedEntry[] {
  return feeds.flat().sort((a, b) => (parseTime(b.time) ?? 0) - (parseTime(a.time) ?? 0))
}

/** Entries newer than lastSeen (ms; 0: never seen) that were not the user's own doing. */
export function unread(entries: readonly FeedEntry[], lastSeen: number): number {
  return entries.filter((f) => !f.byUser && (parseTime(f.time) ?? 0) > lastSeen).length
}

const SEEN = 'shepherd.feedSeen.'

export function lastSeen(projectId: string): number {
  try {
    return Number(localStorage.getItem(SEEN + projectId) ?? 0) || 0
  } catch {
    return 0
  }
}

export function markSeen(projectId: string, at = Date.now()) {
  try {
    localStorage.setItem(SEEN + projectId, String(at))
  } catch {
    // storage unavailable: the count is not remembered
  }
}
