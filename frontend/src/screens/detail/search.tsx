// Log search: matching lines, the lines around them, and highlights.
import type {ReactNode} from 'react'

/** Lines of context shown around each match. */
export const CONTEXT = 2

/** The indices of the lines containing q (lower-case), in order. */
export function findMatches(lines: readonly string[], q: string): number[] {
  const out: number[] = []
  if (!q) return out
  for (let i = 0; i < lines.length; i++) if (lines[i].toLowerCase().includes(q)) out.push(i)
  return out
}

/**
 * The rows shown while searching: each match with `context` lines either
 * side, overlapping stretches merged, -1 for a gap between two stretches.
 */
export function contextRows(matches: readonly number[], total: number, context = CONTEXT): number[] {
  const out: number[] = []
  let end = -1 // the last line pushed
  for (const m of matches) {
    const from = Math.max(0, m - context)
    const to = Math.min(total - 1, m + context)
    if (end >= 0 && from > end + 1) out.push(-1)
    for (let i = Math.max(from, end + 1); i <= to; i++) out.push(i)
    end = Math.max(end, to)
  }
  return out
}

/** text with every occurrence of q (lower-case) in a <mark>. */
export function highlight(text: string, q: string, current = false): ReactNode {
  if (!q) return text
  const lower = text.toLowerCase()
  const parts: ReactNode[] = []
  let at = 0
  for (let i = lower.indexOf(q); i >= 0; i = lower.indexOf(q, i + q.length)) {
    if (i > at) parts.push(text.slice(at, i))
    parts.push(<mark key={i} className={current ? 'current' : undefined}>{text.slice(i, i + q.length)}</mark>)
    at = i + q.length
  }
  if (parts.length === 0) return text
  if (at < text.length) parts.push(text.slice(at))
  return parts
}

export interface Nav {
  seq: number
  dir: 1 | -1
}

/** The match shown as current: the one chosen, else (none chosen yet, or out of range) the latest; -1 for none. */
export function currentMatch(chosen: number, total: number): number {
  if (total === 0) return -1
  return chosen < 0 || chosen >= total ? total - 1 : chosen
}

/** The next current match after a step (wrapping); the last one when there is none yet. */
export function step(cur: number, total: number, dir: 1 | -1): number {
  if (total === 0) return -1
  if (cur < 0) return dir > 0 ? 0 : total - 1
  return (cur + dir + total) % total
}

interface BarProps {
  value: string
  onChange: (v: string) => void
  onStep: (dir: 1 | -1) => void
  current: number
  total: number
  label: string
}

/** The search box: Enter / Shift+Enter step through the matches; Ctrl+F reaches it. */
export function SearchBar({value, onChange, onStep, current, total, label}: BarProps) {
  return (
    <span className="searchbar">
      <input type="search" data-search="log" placeholder="Search  Ctrl+F" aria-label={label} value={value}
        onChange={(e) => onChange(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault()
            onStep(e.shiftKey ? -1 : 1)
          } else if (e.key === 'Escape') {
            e.stopPropagation()
            if (value) onChange('')
            else e.currentTarget.blur()
          }
        }}/>
      {value.trim() && (
        <>
          <span className="match-count" aria-live="polite">{total ? `${current + 1} / ${total}` : 'no match'}</span>
          <button type="button" className="icon small" aria-label="Previous match (Shift+Enter)" title="Previous match (Shift+Enter)"
            disabled={!total} onClick={() => onStep(-1)}>↑</button>
          <button type="button" className="icon small" aria-label="Next match (Enter)" title="Next match (Enter)"
            disabled={!total} onClick={() => onStep(1)}>↓</button>
        </>
      )}
    </span>
  )
}
