// What runs cost and use, in words and figures: the list's cost, CPU and
// memory cells, the detail's figures, the header's summary. Pure functions.
import type {RunResult, Totals} from '../api'
import {duration} from './time'

/** How many digits after the point an amount needs: 2, more until it is shown within half a percent (at most 6). */
export function moneyDecimals(v: number): number {
  const a = Math.abs(v)
  if (!a || !Number.isFinite(a)) return 2
  for (let d = 2; d < 6; d++) {
    const p = 10 ** d
    if (Math.abs(Math.round(a * p) / p - a) <= a * 0.005) return d
  }
  return 6
}

/**
 * An amount with the precision it needs: "$5.00", "$0.42", "$0.0123",
 * "$0.0002" — never "$0.00" for what is not nothing (as the engine and the
 * CLI write it); '' when none was reported.
 */
export function money(v?: number | null): string {
  if (v == null || Number.isNaN(v)) return ''
  let d = moneyDecimals(v)
  let s = Math.abs(v).toFixed(d)
  while (d > 2 && s.endsWith('0')) {
    s = s.slice(0, -1)
    d--
  }
  return v < 0 && /[1-9]/.test(s) ? `-$${s}` : `$${s}`
}

/** A run's exact cost: the same as money (kept for the figures' callers). */
export const exactMoney = (v: number) => money(v)

/** "0%", "0.4%", "12%", "180%" (of one core). */
export function cpuText(pct?: number | null): string {
  if (pct == null) return ''
  if (pct < 0.05) return '0%' // idle: no false precision
  return pct < 9.95 ? `${pct.toFixed(1)}%` : `${Math.round(pct)}%`
}

/** Resident memory, short: "640K", "85M", "1.2G". */
export function memText(bytes?: number | null): string {
  if (bytes == null) return ''
  const k = bytes / 1024
  if (k < 1000) return `${Math.max(0, Math.round(k))}K`
  const m = k / 1024
  if (m < 1000) return `${Math.round(m)}M`
  return `${(m / 1024).toFixed(1)}G`
}

/** Memory for tooltips and the chart's scale: "85.2 MiB". */
export function mib(bytes: number): string {
  const m = bytes / 1048576
  return m >= 1024 ? `${(m / 1024).toFixed(2)} GiB` : `${m.toFixed(m < 10 ? 1 : 0)} MiB`
}

/** Token counts: "950", "12.3k", "1.2M". */
export function tokens(n?: number | null): string {
  if (n == null) return '—'
  if (n < 1000) return String(n)
  const short = (v: number, unit: string) => `${v.toFixed(v < 10 ? 1 : 0).replace(/\.0$/, '')}${unit}`
  return n < 1_000_000 ? short(n / 1000, 'k') : short(n / 1_000_000, 'M')
}

/** One run's or all runs' figures on one line: "3 turns, 1 s, $0.0123, 420 in, 300 cached, 50 out tokens". */
export function figuresText(r: Partial<RunResult>): string {
  return [
    r.runs != null && `${r.runs} run${r.runs === 1 ? '' : 's'}`,
    r.turns != null && `${r.turns} turn${r.turns === 1 ? '' : 's'}`,
    r.durationMs != null && duration(r.durationMs),
    r.costUsd != null && exactMoney(r.costUsd),
    (r.inputTokens != null || r.outputTokens != null) &&
      `${tokens(r.inputTokens)} in, ${tokens(r.cachedInputTokens)} cached, ${tokens(r.outputTokens)} out tokens`,
  ].filter(Boolean).join(', ')
}

/** The rows of the detail's figures table: a label and the value for the last run and for all runs. */
export function figureRows(last?: Partial<RunResult> | null, all?: Partial<Totals> | null): [string, string, string][] {
  const rows: [string, (r: Partial<RunResult>) => string][] = [
    ['Turns', (r) => (r.turns != null ? String(r.turns) : '—')],
    ['Duration', (r) => (r.durationMs != null ? duration(r.durationMs) : '—')],
    ['Cost', (r) => (r.costUsd != null ? exactMoney(r.costUsd) : 'not reported')],
    ['Input tokens', (r) => tokens(r.inputTokens)],
    ['Cached input tokens', (r) => tokens(r.cachedInputTokens)],
    ['Output tokens', (r) => tokens(r.outputTokens)],
  ]
  if (last?.reasoningOutputTokens != null || all?.reasoningOutputTokens != null) {
    rows.push(['Reasoning tokens', (r) => tokens(r.reasoningOutputTokens)])
  }
  return rows.map(([label, f]) => [label, last ? f(last) : '—', all ? f(all) : '—'])
}

/** "1 needs you", "3 need you". */
export const attentionText = (n: number) => `${n} need${n === 1 ? 's' : ''} you`
