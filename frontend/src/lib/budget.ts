// Budgets in words: the row's spend against the limit, the header's cost of
// the day against the daily budget, the detail's question. Pure functions,
// so the screens and the tests agree.
import type {Agent, Project} from '../api'
import {money, moneyDecimals} from './usage'

const usd = money

/** Paused by a budget, waiting for the user's answer. */
export const budgetReached = (a: Agent) => a.status === 'paused' && !!a.budgetPause

/** The agent's per-run limits: "$5.00 and 40 turns per run"; '' for none. */
export function limitsText(a: Pick<Agent, 'maxBudgetUsd' | 'maxTurns'>): string {
  const parts = [a.maxBudgetUsd ? usd(a.maxBudgetUsd) : '', a.maxTurns ? `${a.maxTurns} turns` : ''].filter(Boolean)
  return parts.length ? `${parts.join(' and ')} per run` : ''
}

/** The row's cost cell when a budget is set: the last run's spend against it, "$1.20 / $5.00". */
export function spendText(a: Agent): string {
  if (!a.maxBudgetUsd) return ''
  return `${money(a.lastResult?.costUsd ?? 0)} / ${money(a.maxBudgetUsd)}`
}

/** What the budget question asks about: the limit reached, and what "raise" changes. */
export function budgetQuestion(a: Agent, p?: Project): {what: string; unit: '$' | 'turns'; current: number} {
  switch (a.budgetPause) {
    case 'turns':
      return {what: 'turns per run', unit: 'turns', current: a.maxTurns ?? 0}
    case 'daily':
      return {what: "the project's daily budget", unit: '$', current: p?.dailyBudgetUsd ?? 0}
    default:
      return {what: 'dollars per run', unit: '$', current: a.maxBudgetUsd ?? 0}
  }
}

/**
 * What was reached: the limit, or what the run (or the day) reached past it
 * when that is more — a raise must be above it, as the engine checks.
 */
export function reachedOf(a: Agent, p?: Project): number {
  const q = budgetQuestion(a, p)
  switch (a.budgetPause) {
    case 'turns': return Math.max(q.current, a.lastResult?.turns ?? 0)
    case 'daily': return Math.max(q.current, p?.costToday ?? 0)
    default: return Math.max(q.current, a.lastResult?.costUsd ?? 0)
  }
}

/**
 * A suggested raise: double what was reached, at the precision it needs —
 * a sub-cent limit is raised in sub-cents, never rounded to $0.00 — always
 * above it.
 */
export function suggestedRaise(reached: number, unit: '$' | 'turns'): number {
  if (reached <= 0) return unit === 'turns' ? 10 : 5
  if (unit === 'turns') return Math.floor(reached) * 2 || 1
  const d = moneyDecimals(reached * 2)
  const p = 10 ** d
  const v = Math.ceil(reached * 2 * p - 1e-9) / p
  return v > reached ? v : reached + 1 / p
}

/** Whether a typed raise is one the engine takes: a number above what was reached (whole for turns). '' when it is. */
export function raiseProblem(text: string, reached: number, unit: '$' | 'turns'): string {
  const t = text.trim().replace(/^\$/, '')
  const v = Number(t)
  if (!t || !Number.isFinite(v)) return unit === 'turns' ? 'a number of turns' : 'an amount of dollars'
  if (unit === 'turns' && !Number.isInteger(v)) return 'a whole number of turns'
  if (v <= reached) return `above ${unit === 'turns' ? `${reached} turns` : money(reached)}, what was reached`
  return ''
}

/** The header's cost of the day: "$3.20 today", "$3.20 of $20 today", "daily budget reached · $20.40 of $20". */
export function dailyText(p: Project, today: number): string {
  const b = p.dailyBudgetUsd
  if (!b) return `${money(today)} today`
  if (p.budgetHeld) return `daily budget reached · ${usd(today)} of ${money(b)}`
  return `${money(today)} of ${money(b)} today`
}

/**
 * args as a run is given them: the budget flags inserted before a "--" that
 * ends the options, a flag the user wrote left as it is (as the engine does).
 */
export function withBudgetFlags(a: Pick<Agent, 'profile' | 'maxBudgetUsd' | 'maxTurns'>, args: readonly string[]): string[] {
  const flags = budgetFlags(a.profile, args.includes('--max-budget-usd') ? 0 : a.maxBudgetUsd ?? 0,
    args.includes('--max-turns') ? 0 : a.maxTurns ?? 0)
  const at = args.indexOf('--')
  const cut = at < 0 ? args.length : at
  return [...args.slice(0, cut), ...flags, ...args.slice(cut)]
}

/** The flags Shepherd adds to a Claude Code agent's command line at each start (never stored in its args). */
export function budgetFlags(profile: string, maxBudgetUsd: number, maxTurns: number): string[] {
  if (profile !== 'claude-stream-json') return []
  return [
    ...(maxBudgetUsd > 0 ? ['--max-budget-usd', String(maxBudgetUsd)] : []),
    ...(maxTurns > 0 ? ['--max-turns', String(maxTurns)] : []),
  ]
}
