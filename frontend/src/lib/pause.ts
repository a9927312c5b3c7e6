// Pause, the run queue and the engine, in words: the texts of the project's
// header, the switcher, the pause banner, queued rows and the engine
// indicator. Pure functions, so the screens and the tests agree.
import {LIVE, type Agent, type EngineStatus, type Project} from '../api'
import {ago, clock, parseTime} from './time'

/** 1st, 2nd, 3rd, 4th … 11th, 12th, 13th … 21st, 22nd. */
export function ordinal(n: number): string {
  const tens = n % 100
  const suffix = tens >= 11 && tens <= 13 ? 'th' : ({1: 'st', 2: 'nd', 3: 'rd'} as Record<number, string>)[n % 10] ?? 'th'
  return `${n}${suffix}`
}

/** A queued agent's status word with its place: "queued · 2nd". */
export function queueLabel(a: Pick<Agent, 'queuePosition'>): string {
  return a.queuePosition ? `queued · ${ordinal(a.queuePosition)}` : 'queued'
}

const QUEUED_FOR: Record<string, string> = {
  start: 'to start',
  resume: 'to resume',
  'auto-resume': 'to auto-resume',
  unpause: 'to resume',
  'keep-alive restart': 'to restart',
  'auto start on restore': 'to start',
}

/** What a queued agent waits to do: "to resume after its pause"; '' when unknown. */
export function queuedFor(action?: string | null): string {
  return action ? QUEUED_FOR[action] ?? action : ''
}

/** Live agents, whatever the engine or the list counted. */
export const liveOf = (p: Project) => p.live ?? p.running

/**
 * A project's load, as the header and the switcher show it:
 * "3/4 running · 2 queued", "3 running" (no limit), "paused · 2 queued".
 */
export function loadText(p: Project): string {
  const live = liveOf(p)
  const queued = p.queued ?? 0
  const head = p.paused
    ? live > 0 ? `pausing · ${live} running` : 'paused'
    : p.maxRunning ? `${live}/${p.maxRunning} running` : `${live} running`
  return queued > 0 ? `${head} · ${queued} queued` : head
}

/** The banner's first words: "Paused 5 min ago (May 1, 14:02:10)". */
export function pausedSince(p: Project, now = Date.now()): string {
  if (parseTime(p.pausedAt) === null) return 'Paused'
  return `Paused ${ago(p.pausedAt, now)} (${clock(p.pausedAt)})`
}

/** What a paused agent says beside its status: its note, else that its project paused it (the banner says the rest). */
export function pausedDetail(a: Pick<Agent, 'pauseNote' | 'pausedWithProject'>): string {
  return a.pauseNote?.trim() || (a.pausedWithProject ? 'with the project' : '')
}

/** The agents a project pause waits for: the ones running when it was asked. */
export const pausable = (a: Agent) => a.status === 'running'

export interface PauseProgress {
  done: number
  total: number
  /** Some are still finishing a tool call before they stop. */
  waiting: number
}

/** How far a project pause has come, over the agents it began with. */
export function pauseProgress(agents: readonly Agent[], ids: readonly string[]): PauseProgress {
  const want = new Set(ids)
  let done = 0
  let waiting = 0
  for (const a of agents) {
    if (!want.has(a.id)) continue
    if (!LIVE.has(a.status)) done++
    else if (a.status === 'running' && a.activity?.state === 'busy') waiting++
  }
  // An agent removed meanwhile counts as done.
  const known = agents.filter((a) => want.has(a.id)).length
  return {done: done + (ids.length - known), total: ids.length, waiting}
}

/** "Pausing 3 agents… 1 paused" while a project pause runs. */
export function progressText({done, total, waiting}: PauseProgress): string {
  const head = `Pausing ${total} agent${total === 1 ? '' : 's'}… ${done} paused`
  return waiting > 0 ? `${head}; ${waiting} finishing a tool call first` : head
}

/** The engine the window talks to, in a few words, and the rest for a tooltip. */
export function engineText(st: EngineStatus | undefined): {text: string; detail?: string; title: string; tone: 'ok' | 'warn' | 'bad'} {
  const where = [st?.url && `API ${st.url}`, st?.pid && `pid ${st.pid}`, st?.dataDir && `data ${st.dataDir}`]
    .filter(Boolean).join('\n')
  switch (st?.state) {
    case 'embedded':
      return {text: 'Engine: this window', tone: 'ok',
        title: `This window runs the engine; the CLI and \`shepherd serve\` talk to it.\n${where}`}
    case 'attached':
      return {text: 'Attached to an engine', detail: `pid ${st.pid}${st.url ? ` · ${st.url}` : ''}`, tone: 'ok',
        title: `The engine runs as a process of its own (started by a window, \`shepherd serve\` or at login); this window is its client, and quitting it quits the engine too.\n${where}`}
    case 'lost':
      // The banner above says it went away; here, only that none answers.
      return {text: 'No engine', detail: st.pid ? `pid ${st.pid} gone` : undefined, tone: 'bad', title: st.message || where}
    case undefined:
      return {text: 'Engine: …', tone: 'warn', title: 'Asking the engine'}
  }
  return {text: 'No engine', tone: 'bad', title: st?.message || 'The engine is not running'}
}
