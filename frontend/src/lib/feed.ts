// The activity feed: the lines of events.jsonl that a person wants to know
// about (failures, recoveries, automatic restarts, timeouts…), in words, and
// what is unread (kept on this machine: the last time the feed was seen).
import type {EngineEvent} from '../api'
import {parseTime} from './time'
import {money} from './usage'

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
  /** The events.jsonl line's event (what kind of entry). */
  event?: string
  /** Seen already: a crash of a loop the user acknowledged (shown, not counted). */
  quiet?: boolean
  /** The same finding again (a crash loop's crashes): how many in all, and the latest's time. */
  repeats?: number
  lastTime?: string
  /** A crash's keep-alive restart, told with it. */
  restart?: string
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

/** The engine's recovery actions (backend/recovery), in words. */
export const RECOVERY: Record<string, [Level, string]> = {
  resume: ['warning', 'auto-resumed'],
  resume_limit: ['error', 'auto-resume limit reached; gave up'],
  completed: ['success', 'marked completed from its log'],
  failed: ['error', 'marked failed from its log'],
  keep: ['info', 'ended while Shepherd was away; status as it exited'],
  stay_interrupted: ['warning', 'left interrupted: cannot be resumed'],
  notify_stale: ['warning', 'silent; left running'],
  restart: ['warning', 'silent; restarted'],
  // The names of earlier versions' lines.
  mark_completed: ['success', 'marked completed from its log'],
  mark_failed: ['error', 'marked failed from its log'],
  notify_stale_alive: ['warning', 'silent; left running'],
}

/** What the log analysis found, in words that fit how the agent was found: a live, silent process has not "stopped". */
function verdictText(found: string | undefined, verdict: string | undefined): string {
  switch (verdict) {
    case 'completed': return 'its log shows it finished'
    case 'error': return 'its log ends in an error'
    case 'interrupted': return found === 'stale' ? 'still running; its log shows no end' : 'its log just stops'
    case undefined: case '': return ''
  }
  return `log: ${verdict}`
}

/** "silent for 30 s", "silent for 6 min": in the unit of the limit, never "0 min". */
export function silentFor(secs: number): string {
  if (secs < 60) return `silent for ${Math.max(0, Math.round(secs))} s`
  if (secs < 3600) return `silent for ${Math.floor(secs / 60)} min`
  const h = Math.floor(secs / 3600)
  const m = Math.floor((secs % 3600) / 60)
  return `silent for ${h} h${m ? ` ${m} min` : ''}`
}

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
  const base = {key: `${projectId}:${e.time}:${index}`, time: e.time, projectId, agentId: e.agentId, byUser: false,
    event: e.event, ...(e.data?.acknowledged === true ? {quiet: true} : {})}
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
      const silent = num(d.silentSec)
      const found = str(d.found) === 'stale' ? (silent !== undefined ? silentFor(silent) : 'silent too long')
        : str(d.found) === 'dead' ? 'found dead' : str(d.found)
      const count = num(d.autoResumeCount)
      const parts = [found, verdictText(str(d.found), str(d.verdict)), count ? `${count} auto-resume${count === 1 ? '' : 's'} so far` : '']
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
      const limit = num(d.limit)
      const amount = limit === undefined ? '' : str(d.budget) === 'turns' ? `${limit} turns` : money(limit)
      const title = action === 'raise' ? (limit ? `budget raised to ${amount}` : 'budget raised (no limit)')
        : action === 'remove' ? 'budget limit removed' : action === 'once' ? 'resumed once past its budget' : 'stopped at its budget'
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

/**
 * A project's events as feed entries, newest first. The feed records
 * changes, not repeats (SPEC "Attention"): the same finding again for the
 * same agent — a stale check's repeat (engines before this rule wrote one
 * per check), a crash loop's next crash ending the same way, with its
 * restart — is folded into the entry of its first time (with a count), so
 * that it neither floods the list nor counts as unread again.
 */
export function feedOf(events: readonly EngineEvent[], projectId: string): FeedEntry[] {
  const out: FeedEntry[] = []
  // Per agent: its latest entry that a repeat folds into, and what makes a repeat of it.
  const open = new Map<string, {entry: FeedEntry; sig: string; since?: number}>()
  events.forEach((e, i) => {
    const f = describe(e, projectId, i)
    const agent = e.agentId ?? ''
    const cur = agent ? open.get(agent) : undefined
    const sig = repeatSig(e)
    if (agent && sig && cur && cur.sig === sig && sameSilence(cur.since, e)) {
      cur.entry.repeats = (cur.entry.repeats ?? 1) + 1
      cur.entry.lastTime = e.time
      cur.entry.quiet = cur.entry.quiet || f?.quiet // (never un-quiets what the user saw)
      return
    }
    // A crash loop's restart goes with its crash; an acknowledgment, a start or its run change nothing of the finding.
    if (agent && cur && e.event === 'keep-alive:scheduled' && cur.entry.event === 'transition') {
      const r = describe(e, projectId, i)
      cur.entry.restart = r ? [r.title, r.reason].filter(Boolean).join(', ') : undefined
      return
    }
    if (!f) {
      if (agent && e.event === 'transition' && !['spawning', 'running'].includes(e.to ?? '')) open.delete(agent)
      return
    }
    out.push(f)
    if (!agent || e.event === 'attention:acknowledged') return
    if (sig) open.set(agent, {entry: f, sig, since: silenceStart(e)})
    else open.delete(agent)
  })
  for (const f of out) {
    if (f.repeats && f.repeats > 1 && f.event === 'transition') {
      f.reason = [f.reason, `${f.repeats} times in a row`].filter(Boolean).join(' · ')
    }
    if (f.restart) f.reason = [f.reason, f.restart].filter(Boolean).join(' · ')
  }
  return out.reverse()
}

/** What makes an event a repeat of the one before it for its agent ('' for none). */
function repeatSig(e: EngineEvent): string {
  const d = e.data ?? {}
  if (e.event === 'recovery') return `recovery|${str(d.found)}|${str(d.action)}|${str(d.verdict)}`
  if (e.event === 'transition' && (e.to === 'failed' || e.to === 'interrupted' || e.to === 'completed')) {
    return `end|${e.to}|${endText(e)}`
  }
  return ''
}

/** When a stale finding's silence began (ms), if the engine said how long it was. */
function silenceStart(e: EngineEvent): number | undefined {
  const s = num(e.data?.silentSec)
  const t = parseTime(e.time)
  return s !== undefined && t !== null ? t - s * 1000 : undefined
}

/** A later stale line is the same finding: an old engine's repeat (no silence said), or the same silence. */
function sameSilence(since: number | undefined, e: EngineEvent): boolean {
  const later = silenceStart(e)
  return later === undefined || since === undefined || Math.abs(later - since) < 2000
}

/** Entries of several projects in one list, newest first. */
export function mergeFeeds(feeds: readonly FeedEntry[][]): FeedEntry[] {
  return feeds.flat().sort((a, b) => (parseTime(b.time) ?? 0) - (parseTime(a.time) ?? 0))
}

/**
 * What the user has not seen: entries newer than lastSeen (ms; 0: never
 * seen), not their own doing, not a repeat they acknowledged, and not older
 * than their acknowledgment of that agent (they dealt with it).
 */
export function unread(entries: readonly FeedEntry[], lastSeen: number): number {
  const acked = new Map<string, number>()
  for (const f of entries) {
    if (f.event === 'attention:acknowledged' && f.agentId) {
      acked.set(f.agentId, Math.max(acked.get(f.agentId) ?? 0, parseTime(f.time) ?? 0))
    }
  }
  return entries.filter((f) => {
    const t = parseTime(f.time) ?? 0
    return !f.byUser && !f.quiet && t > lastSeen && !(f.agentId && t <= (acked.get(f.agentId) ?? 0))
  }).length
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
