// Attention first: which group an agent belongs to, why it needs the user,
// how the list is filtered and sorted. Pure functions, so the list and the
// tests agree.
import {LIVE, type Agent} from '../api'
import {parseTime} from './time'

export type Group = 'attention' | 'working' | 'idle'
export const GROUPS: readonly Group[] = ['attention', 'working', 'idle']
export const GROUP_LABELS: Record<Group, string> = {attention: 'Needs you', working: 'Working', idle: 'Idle'}

/**
 * Keep-alive restart failures in a row from which an agent is in a crash
 * loop (the engine's attention.CrashLoop).
 */
export const CRASH_LOOP = 5

/** A keep-alive agent waiting for its next restart. */
export const isRestarting = (a: Agent) => !!a.nextRestartAt && !LIVE.has(a.status)

/** A duration as Go prints a time.Duration rounded to the second: "32s", "1m4s", "1h0m5s". */
export function goSeconds(ms: number): string {
  const total = Math.round(ms / 1000)
  const h = Math.floor(total / 3600)
  const m = Math.floor((total % 3600) / 60)
  const sec = total % 60
  if (h) return `${h}h${m}m${sec}s`
  if (m) return `${m}m${sec}s`
  return `${sec}s`
}

/** A keep-alive agent the user wants running that crashed CRASH_LOOP times in a row or more (acknowledged or not). */
export const inCrashLoop = (a: Agent) => a.restartFailureCount >= CRASH_LOOP && a.desired === 'running' && a.keepAlive

/** The engine's rule (package attention), for records that do not carry its reason. */
function localReason(a: Agent, now: number): string {
  const live = LIVE.has(a.status)
  const act = a.activity
  if (act?.state === 'waiting' && act.needsYou && a.status === 'running') return `waiting: ${act.waiting ?? ''}`
  // A budget asks: raise it, resume once, or stop.
  if (a.budgetPause && a.status === 'paused') return a.pauseNote || 'budget reached'
  if (a.stale && a.status === 'running') return 'silent, left running'
  if (inCrashLoop(a)) {
    let s = `crash loop: ${a.restartFailureCount} crashes in a row`
    const next = parseTime(a.nextRestartAt)
    if (next !== null && !live) {
      const d = next - now
      s += d > 0 ? `, next try in ${goSeconds(d)}` : ', restarting'
    }
    return s
  }
  if (isRestarting(a)) return ''
  if (a.status === 'failed') return a.exitReason === 'resume_limit' ? 'auto-resume limit reached' : 'failed'
  if (a.status === 'paused' && a.budgetPause) return 'budget reached'
  if (a.status === 'interrupted') {
    const unknown = !a.exitReason || a.exitReason === 'unknown' ||
      (a.exitReason === 'exited_while_app_closed' && a.exitCode == null)
    return unknown ? 'interrupted, reason unknown' : 'interrupted'
  }
  if (a.error && !live && a.status !== 'queued') return a.exitReason === 'timed_out' ? 'timed out' : 'could not start'
  return ''
}

/** Whether there is something the user could acknowledge (the engine's rule, acknowledged or not). */
export const acknowledgeable = (a: Agent, now = Date.now()) =>
  !!a.attention || localReason(a, now) !== ''

/**
 * Why an agent needs the user, in a few words; '' when it does not (or the
 * user acknowledged it). The engine's reason when the record carries one —
 * a crash loop's next try counted down here, as the engine would say it now.
 */
export function attentionReason(a: Agent, now = Date.now()): string {
  if (a.attention) {
    const local = a.attention.startsWith('crash loop') ? localReason(a, now) : ''
    return local.startsWith('crash loop') ? local : a.attention
  }
  return a.acknowledgedAt ? '' : localReason(a, now)
}

export function groupOf(a: Agent, now = Date.now()): Group {
  if (attentionReason(a, now)) return 'attention'
  if (LIVE.has(a.status) || a.status === 'queued' || isRestarting(a)) return 'working'
  return 'idle'
}

export type SortKey = 'default' | 'name' | 'status' | 'activity' | 'runtime' | 'started' | 'runs' | 'cost' | 'cpu' | 'mem'
export interface Sort {
  key: SortKey
  desc: boolean
}

const time = (t?: string | null) => parseTime(t) ?? 0

/** Run time in ms for sorting: live runs count to now. */
function runMs(a: Agent, now: number): number {
  const start = parseTime(a.startedAt)
  if (start === null) return -1
  if (LIVE.has(a.status)) return now - start
  const stop = parseTime(a.stoppedAt)
  return stop === null ? -1 : stop - start
}

/**
 * How many runs the agent started: the engine's count on the record
 * (runCount); from an engine without it, what its events show (seen) when
 * known, never fewer than its record proves (a start, its restarts and
 * resumes, the runs that reported figures). The list's Runs column and the
 * detail's run picker both count this way. 0: never run.
 */
export function runsOf(a: Agent, seen = 0): number {
  if (a.runCount) return a.runCount
  if (!a.startedAt) return 0
  return Math.max(seen, a.totals?.runs ?? 0, 1 + a.restartCount + a.resumeCount)
}
export const costOf = (a: Agent) => a.totals?.costUsd ?? a.lastResult?.costUsd ?? undefined
/** The latest CPU and memory sample of a running agent; undefined for one not running. */
export const statsOf = (a: Agent) => (LIVE.has(a.status) ? a.stats ?? undefined : undefined)

/**
 * The latest start or end of the agent (not its log output, which would make
 * running rows jump about while they write).
 */
export const touchedAt = (a: Agent) => Math.max(time(a.stoppedAt), time(a.startedAt), time(a.createdAt))

const STATUS_ORDER = ['failed', 'interrupted', 'timed_out', 'running', 'spawning', 'stopping', 'killing',
  'queued', 'paused', 'stopped', 'completed', 'not_started']

function compare(a: Agent, b: Agent, key: SortKey, now: number): number {
  switch (key) {
    case 'name': return (a.name || a.id).localeCompare(b.name || b.id)
    case 'status': return STATUS_ORDER.indexOf(a.status) - STATUS_ORDER.indexOf(b.status)
    case 'activity': return time(a.activity?.since ?? a.lastActivityAt) - time(b.activity?.since ?? b.lastActivityAt)
    case 'runtime': return runMs(a, now) - runMs(b, now)
    case 'started': return time(a.startedAt) - time(b.startedAt)
    case 'runs': return runsOf(a) - runsOf(b)
    case 'cost': return (costOf(a) ?? -1) - (costOf(b) ?? -1)
    case 'cpu': return (statsOf(a)?.cpuPercent ?? -1) - (statsOf(b)?.cpuPercent ?? -1)
    case 'mem': return (statsOf(a)?.rssBytes ?? -1) - (statsOf(b)?.rssBytes ?? -1)
    case 'default': return touchedAt(b) - touchedAt(a) // most recent first
  }
}

/** Sorted copy; ties keep the name order so rows do not jump. */
export function sortAgents(agents: readonly Agent[], sort: Sort, now = Date.now()): Agent[] {
  const dir = sort.desc && sort.key !== 'default' ? -1 : 1
  return agents.slice().sort((a, b) =>
    dir * compare(a, b, sort.key, now) || (a.name || a.id).localeCompare(b.name || b.id))
}

/** Agents whose id, name, command or status contain every word of the query. */
export function filterAgents(agents: readonly Agent[], query: string, groups?: ReadonlySet<Group>): Agent[] {
  const words = query.trim().toLowerCase().split(/\s+/).filter(Boolean)
  return agents.filter((a) => {
    if (groups && groups.size > 0 && !groups.has(groupOf(a))) return false
    if (!words.length) return true
    const hay = `${a.id} ${a.name ?? ''} ${a.command} ${(a.args ?? []).join(' ')} ${a.status} ${a.exitReason ?? ''}`.toLowerCase()
    return words.every((w) => hay.includes(w))
  })
}

export interface GroupRows {
  group: Group
  agents: Agent[]
}

/** The agents in their groups, attention first, each group sorted; empty groups left out. */
export function groupAgents(agents: readonly Agent[], sort: Sort, now = Date.now()): GroupRows[] {
  const by: Record<Group, Agent[]> = {attention: [], working: [], idle: []}
  for (const a of agents) by[groupOf(a)].push(a)
  return GROUPS.filter((g) => by[g].length > 0).map((g) => ({group: g, agents: sortAgents(by[g], sort, now)}))
}

export function countGroups(agents: readonly Agent[]): Record<Group, number> {
  const n: Record<Group, number> = {attention: 0, working: 0, idle: 0}
  for (const a of agents) n[groupOf(a)]++
  return n
}

/** Agents that "Stop all" stops: live, queued, or waiting to restart. */
export const stoppable = (a: Agent) => LIVE.has(a.status) || a.status === 'queued' || isRestarting(a)
