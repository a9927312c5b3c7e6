// Runs, not one blur: an agent's log holds every run, appended. The events
// say where each run began (a transition to "running", with the byte offset
// of its first line in data.logOffset when the engine records it), why, and
// how the run before it ended. These functions turn that into markers placed
// between log lines.
import type {EngineEvent} from '../api'
import {causeText, endText} from './feed'
import {parseTime, short} from './time'

export interface Run {
  /** 1-based, in order of start. */
  n: number
  startedAt: string
  /** Why it started: "started by you", "auto-resumed after 5 min silent"… */
  cause: string
  /** How the run before it ended, when known. */
  prevEnd?: string
  /** How this run ended, when it has. */
  end?: string
  sessionId?: string
  /** Byte offset in agent.log of the run's first line, when the engine said. */
  logOffset?: number
  /** The user's message it resumed with (a reply): the user's turn in the conversation. */
  prompt?: string
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)
const str = (v: unknown) => (typeof v === 'string' ? v : undefined)
const TERMINAL = new Set(['completed', 'failed', 'stopped', 'interrupted', 'paused'])

/** Why a recovery resumed an agent, for the cause of the run it started. */
function recoveryWhy(rec: EngineEvent | undefined, staleThresholdSec?: number): string {
  if (!rec) return ''
  const found = str(rec.data?.found)
  // How long it was silent, as the engine measured it; else the threshold it passed.
  const silent = num(rec.data?.silentSec) ?? staleThresholdSec
  if (found === 'stale') return silent ? `after ${short(silent * 1000)} silent` : 'after it went silent'
  if (found === 'dead') return 'after it was found dead'
  return ''
}

/** The runs of one agent from its events (oldest first), in order. */
export function runsFromEvents(events: readonly EngineEvent[], agentId?: string, staleThresholdSec?: number): Run[] {
  const runs: Run[] = []
  let lastEnd: string | undefined
  let lastRecovery: EngineEvent | undefined
  let restartFailures: number | undefined
  let message: string | undefined
  const sorted = events
    .filter((e) => !agentId || e.agentId === agentId)
    .map((e, i) => ({e, i}))
    .sort((a, b) => (parseTime(a.e.time) ?? 0) - (parseTime(b.e.time) ?? 0) || a.i - b.i)
    .map((x) => x.e)
  for (const e of sorted) {
    if (e.event === 'recovery') lastRecovery = e
    if (e.event === 'keep-alive:scheduled') restartFailures = num(e.data?.failures)
    if (e.event === 'message') message = str(e.data?.message)
    if (e.event === 'session') {
      const cur = runs[runs.length - 1]
      if (cur && !cur.end) cur.sessionId = str(e.data?.sessionId) ?? cur.sessionId
    }
    if (e.event !== 'transition') continue
    if (e.to === 'running' && e.from === 'spawning') {
      let cause = causeText(e.reason)
      if (e.reason === 'auto-resume') {
        const why = recoveryWhy(lastRecovery, staleThresholdSec)
        if (why) cause += ` ${why}`
      }
      if (e.reason === 'keep-alive restart' && restartFailures) {
        cause += ` (${restartFailures} failure${restartFailures === 1 ? '' : 's'} in a row)`
      }
      const prompt = e.reason === 'resume' ? message : undefined
      if (prompt) cause = 'resumed with your message'
      runs.push({n: runs.length + 1, startedAt: e.time, cause, prevEnd: lastEnd, logOffset: num(e.data?.logOffset), prompt})
      message = undefined
      lastEnd = undefined
      lastRecovery = undefined
    } else if (e.to && TERMINAL.has(e.to)) {
      lastEnd = endText(e)
      const cur = runs[runs.length - 1]
      if (cur && !cur.end) cur.end = lastEnd
    }
  }
  return runs
}

/** Runs started per agent, from a project's events. */
export function runCounts(events: readonly EngineEvent[]): Record<string, number> {
  const n: Record<string, number> = {}
  for (const e of events) {
    if (e.event === 'transition' && e.to === 'running' && e.from === 'spawning' && e.agentId) n[e.agentId] = (n[e.agentId] ?? 0) + 1
  }
  return n
}

/** "Run 3 · auto-resumed after 5 min silent · session 5f0c…" */
export function runTitle(r: Run): string {
  const parts = [`Run ${r.n}`, r.cause]
  if (r.sessionId) parts.push(`session ${r.sessionId.length > 8 ? `${r.sessionId.slice(0, 8)}…` : r.sessionId}`)
  return parts.join(' · ')
}

/** UTF-8 length of a string, without allocating. */
export function utf8Length(s: string): number {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4
      i++
    } else n += 3
  }
  return n
}

/** The byte offset at which each line starts, given the offset just past the last one. */
export function lineStarts(lines: readonly string[], endOffset: number): number[] {
  const out = new Array<number>(lines.length)
  let off = endOffset
  for (let i = lines.length - 1; i >= 0; i--) {
    off -= utf8Length(lines[i]) + 1
    out[i] = off
  }
  return out
}

export interface Marker {
  run: Run
  /** The index of the line the marker goes before. */
  line: number
  /** The run started before the first line held: its marker heads the view. */
  earlier?: boolean
}

const isInit = (l: string) => l.startsWith('{') && /"subtype"\s*:\s*"init"/.test(l) && /"type"\s*:\s*"system"/.test(l)

/**
 * Where each run's marker goes among the lines held. With byte offsets: before
 * the first line at or past the run's logOffset (runs recorded without one are
 * left out). Without any (an engine that
 * does not record logOffset): a Claude stream-json log's runs each begin with
 * an init line, matched to the last runs in order; other logs get no markers.
 */
export function placeMarkers(runs: readonly Run[], lines: readonly string[], starts?: readonly number[] | null): Marker[] {
  if (runs.length === 0 || lines.length === 0) return []
  const out: Marker[] = []
  const withOffset = runs.filter((r) => r.logOffset !== undefined)
  if (starts && starts.length === lines.length && withOffset.length > 0) {
    let i = 0
    let before: Run | undefined
    for (const r of withOffset) {
      if (r.logOffset! < starts[0]) {
        before = r // began before the lines held; the latest such heads the view
        continue
      }
      while (i < lines.length && starts[i] < r.logOffset!) i++
      if (i >= lines.length) break // a run with no output yet
      out.push({run: r, line: i})
    }
    if (before && !(out.length && out[0].line === 0)) out.unshift({run: before, line: 0, earlier: true})
    return out
  }
  const inits: number[] = []
  lines.forEach((l, i) => isInit(l) && inits.push(i))
  const k = Math.min(inits.length, runs.length)
  for (let j = 0; j < k; j++) {
    out.push({run: runs[runs.length - k + j], line: inits[inits.length - k + j]})
  }
  return out
}
