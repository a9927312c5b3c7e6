// "While Shepherd was closed": what the engine found at its start, in words,
// and whether this window has shown it (once per engine start).
import type {WhileClosed} from '../api'
import {RECOVERY} from './feed'

export type Outcome = NonNullable<NonNullable<WhileClosed['projects']>[number]['agents']>[number]

/** An agent's outcome in words: "exited with exit code 3", "still running — re-attached". */
export function outcomeText(o: Outcome): string {
  const code = o.exitCode != null ? `exit code ${o.exitCode}` : ''
  switch (o.outcome) {
    case 'reattached': return 'still running — re-attached'
    case 'exited_while_closed': return code ? `exited — ${code}` : 'exited'
    case 'unknown_exit': return 'ended — reason unknown'
    case 'pid_reused': return 'lost — its pid now belongs to another process'
    case 'other_boot': return 'gone — the machine was restarted'
    case 'never_started': return 'never started — Shepherd stopped before its process did'
    case 'corrupt': return 'unreadable record, moved aside'
    case 'auto_started': return 'started (it starts when Shepherd opens its project)'
    case 'keep_alive_scheduled': return 'keep-alive restart scheduled'
  }
  return o.outcome.replace(/_/g, ' ')
}

const SHORT: Record<string, string> = {
  exited_while_closed: 'exited', unknown_exit: 'ended (reason unknown)', reattached: 're-attached', pid_reused: 'lost to a reused pid',
  other_boot: 'gone with a reboot', never_started: 'never started', auto_started: 'auto-started',
  keep_alive_scheduled: 'restart scheduled', corrupt: 'unreadable',
}

/** "2 exited, 1 re-attached" for a project's heading. */
export function countsText(counts: Record<string, number> | null | undefined): string {
  return Object.entries(SHORT).filter(([k]) => (counts?.[k] ?? 0) > 0).map(([k, w]) => `${counts![k]} ${w}`).join(', ')
}

const RECOVERED: Record<string, string> = {
  keep: '', // its status already says how it ended
  completed: 'marked completed from its log',
  failed: 'marked failed from its log',
  resume: 'auto-resumed',
  resume_limit: 'auto-resume limit reached',
  stay_interrupted: 'left interrupted: it cannot be resumed',
  restart: 'restarted',
}

/** What recovery did about it: "auto-resumed", "marked completed from its log"; '' when nothing worth saying. */
export function recoveryText(o: Outcome): string {
  if (!o.recovery) return ''
  return RECOVERED[o.recovery] ?? RECOVERY[o.recovery]?.[1] ?? o.recovery.replace(/_/g, ' ')
}

/** Outcomes that are bad news (red); the others are told calmly. */
export const BAD = new Set(['exited_while_closed', 'unknown_exit', 'pid_reused', 'other_boot', 'corrupt'])

/** Whether the summary says anything at all. */
export const hasNews = (w: WhileClosed | null | undefined) =>
  !!w?.projects?.some((p) => (p.agents?.length ?? 0) > 0 || (p.corrupt?.length ?? 0) > 0)

const SEEN = 'shepherd.whileClosedSeen'

/** The engine start (its summary's `at`) whose summary this window showed last. */
export function seenAt(): string {
  try {
    return localStorage.getItem(SEEN) ?? ''
  } catch {
    return ''
  }
}

export function markSeenAt(at: string) {
  try {
    localStorage.setItem(SEEN, at)
  } catch {
    // storage unavailable: it may be shown again
  }
}

/** A summary to show now: news from an engine start not shown before. */
export const toShow = (w: WhileClosed | null | undefined) => !!w && hasNews(w) && w.at !== seenAt()

/**
 * Whether a project's sync summary only repeats what the while-closed summary
 * says (its first load after the start): then no toast.
 */
export function repeats(w: WhileClosed | null | undefined, projectId: string, counts: Record<string, number> | null | undefined): boolean {
  const p = w?.projects?.find((x) => x.projectId === projectId)
  if (!p) return false
  return Object.entries(counts ?? {}).every(([k, n]) =>
    k === 'unchanged' || k === 'running' || n <= (p.counts?.[k] ?? 0) || k.startsWith('recovery_'))
}
