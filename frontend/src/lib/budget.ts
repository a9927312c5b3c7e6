// Budgets in words: the row's spend against the limit, the header's cost of
// the day against the daily budget, the detail's question. Pure functions,
// so the screens and the tests agree.
import type {Agent, Project} from '../api'
import {money} from './usage'

const usd = (v: number) => `$${v.toFixed(2)}`

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

/** A suggested raise: double the limit reached (at least one more turn or dollar). */
export function suggestedRaise(current: number, unit: '$' | 'turns'): number {
  if (current <= 0) return unit === 'turns' ? 10 : 5
  return unit === 'turns' ? current * 2 : Math.round(current * 200) / 100
}

/** The header's cost of the day: "$3.20 today", "$3.20 of $20 today", "daily budget reached · $20.40 of $20". */
export function dailyText(p: Project, today: number): string {
  const b = p.dailyBudgetUsd
  if (!b) return `${money(today)} today`
  if (p.budgetHeld) return `daily budget reached · ${usd(today)} of ${money(b)}`
  return `${money(today)} of ${money(b)} today`
}

/** The flags Shepherd adds to a Claude Code agent's command line at each start (never stored in its args). */
export function budgetFlags(profile: string, maxBudgetUsd: number, maxTurns: number): string[] {
  if (profile !== 'claude-stream-json') return []
  return [
    ...(maxBudgetUsd > 0 ? ['--max-budget-usd', String(maxBudgetUsd)] : []),
    ...(maxTurns > 0 ? ['--max-turns', String(maxTurns)] : []),
  ]
}
