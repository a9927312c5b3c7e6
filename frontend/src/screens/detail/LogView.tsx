import {useDeferredValue, useEffect, useLayoutEffect, useMemo, useRef, useState} from 'react'
import {useVirtualizer} from '@tanstack/react-virtual'
import type {Marker} from '../../lib/runs'
import {CONTEXT, contextRows, findMatches, highlight} from './search'
import {RunMarker} from './RunMarker'

export const ROW_HEIGHT = 18

interface Props {
  lines: readonly string[]
  search?: string
  /** Which match is current (an index into the matches), -1: none. */
  current?: number
  onMatches?: (total: number) => void
  /** Run markers, placed before their lines (not while searching). */
  markers?: readonly Marker[]
  /** Jump to this run's marker (seq changes for each jump). */
  jump?: {seq: number; run: number} | null
  wrap?: boolean
}

type Row = {kind: 'line'; i: number} | {kind: 'marker'; m: Marker} | {kind: 'gap'}

/**
 * A virtualised log: only the rows in view are in the DOM, so a log of a
 * million lines scrolls as smoothly as ten. It follows new lines while the
 * view is at the bottom and pauses when the user scrolls up. A search shows
 * the matching lines with a few lines around them, highlighted; run markers
 * separate the runs.
 */
export function LogView({lines, search = '', current = -1, onMatches, markers = [], jump, wrap = false}: Props) {
  const q = useDeferredValue(search.trim().toLowerCase())
  const matches = useMemo(() => (q ? findMatches(lines, q) : null), [lines, q])
  const rows = useMemo(() => (matches ? contextRows(matches, lines.length) : null), [matches, lines.length])
  const marks = rows ? [] : markers
  const count = rows ? rows.length : lines.length + marks.length

  useEffect(() => {
    onMatches?.(matches?.length ?? 0)
  }, [matches, onMatches])

  // Row r of the view: a line, a run marker (before its line) or a gap between search stretches.
  const rowAt = (r: number): Row => {
    if (rows) return rows[r] < 0 ? {kind: 'gap'} : {kind: 'line', i: rows[r]}
    let before = 0
    for (let k = 0; k < marks.length; k++) {
      const at = marks[k].line + k
      if (at === r) return {kind: 'marker', m: marks[k]}
      if (at < r) before++
    }
    return {kind: 'line', i: r - before}
  }
  const rowOfLine = (i: number): number => {
    if (rows) {
      let lo = 0
      let hi = rows.length - 1
      while (lo <= hi) {
        const mid = (lo + hi) >> 1
        const v = rows[mid]
        if (v === i) return mid
        // gaps (-1) sit between ascending stretches: look at a neighbour
        const cmp = v < 0 ? rows[mid + 1] : v
        if (cmp < i) lo = mid + 1
        else hi = mid - 1
      }
      return -1
    }
    return i + marks.filter((m) => m.line <= i).length
  }

  const ref = useRef<HTMLDivElement>(null)
  const [following, setFollowing] = useState(true)
  const [seen, setSeen] = useState(count)
  const v = useVirtualizer({
    count,
    getScrollElement: () => ref.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 20,
    initialRect: {width: 800, height: 400},
  })

  const toEnd = () => {
    const el = ref.current
    if (!el) return
    if (wrap) v.scrollToIndex(count - 1, {align: 'end'})
    else el.scrollTop = count * ROW_HEIGHT
  }
  useLayoutEffect(() => {
    if (!following || !ref.current) return
    toEnd()
    setSeen(count)
  }, [count, following, wrap]) // eslint-disable-line react-hooks/exhaustive-deps

  useEffect(() => {
    if (following) setSeen(count)
  }, [following, count])

  // The current match, and run jumps, are brought into view; following pauses.
  const matchLine = matches && current >= 0 && current < matches.length ? matches[current] : -1
  useEffect(() => {
    if (matchLine < 0) return
    const r = rowOfLine(matchLine)
    if (r < 0) return
    setFollowing(false)
    v.scrollToIndex(r, {align: 'center'})
  }, [matchLine, q]) // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => {
    if (!jump) return
    const k = marks.findIndex((m) => m.run.n === jump.run)
    if (k < 0) return
    setFollowing(false)
    v.scrollToIndex(marks[k].line + k, {align: 'start'})
  }, [jump?.seq]) // eslint-disable-line react-hooks/exhaustive-deps

  const onScroll = () => {
    const el = ref.current
    if (!el) return
    const bottom = v.getTotalSize() - (el.scrollTop + el.clientHeight)
    setFollowing(bottom <= ROW_HEIGHT * 2)
  }
  const jumpEnd = () => {
    setFollowing(true)
    toEnd()
  }
  const fresh = Math.max(0, count - seen)
  const n = matches?.length ?? 0

  return (
    <div className={wrap ? 'logview wrap' : 'logview'}>
      <div className="log-status" aria-live="polite">
        {matches
          ? `${n} matching line${n === 1 ? '' : 's'} of ${lines.length}, with ${CONTEXT} lines around each`
          : `${lines.length} line${lines.length === 1 ? '' : 's'}`}
        {following
          ? <span className="following"> · following</span>
          : <button type="button" className="link" onClick={jumpEnd}>
              Paused{fresh > 0 ? ` — ${fresh} new line${fresh === 1 ? '' : 's'}` : ''} · jump to end
            </button>}
      </div>
      {lines.length === 0
        ? <p className="muted log-empty">Nothing in the log yet.</p>
        : (
          <div ref={ref} className="log-scroll" onScroll={onScroll} role="log" aria-label="Log" tabIndex={0}>
            <div style={{height: v.getTotalSize(), position: 'relative', minWidth: '100%'}}>
              {v.getVirtualItems().map((vr) => {
                const row = rowAt(vr.index)
                const style = {position: 'absolute' as const, top: 0, left: 0, minWidth: '100%', transform: `translateY(${vr.start}px)`,
                  ...(wrap ? {right: 0} : {height: ROW_HEIGHT})}
                const measure = wrap ? v.measureElement : undefined
                if (row.kind === 'marker') {
                  return <div key={vr.index} ref={measure} data-index={vr.index} style={style} className="log-row"><RunMarker marker={row.m} compact={!wrap}/></div>
                }
                if (row.kind === 'gap') {
                  return <div key={vr.index} ref={measure} data-index={vr.index} style={style} className="log-line log-gap">⋯</div>
                }
                const isMatch = !!q && lines[row.i].toLowerCase().includes(q)
                const cls = `log-line${isMatch ? ' match' : ' context'}${row.i === matchLine ? ' current' : ''}`
                return (
                  <div key={vr.index} ref={measure} data-index={vr.index} data-line={row.i} style={style}
                    className={q ? cls : 'log-line'}>
                    {q ? highlight(lines[row.i], q, row.i === matchLine) : lines[row.i]}
                  </div>
                )
              })}
            </div>
          </div>
        )}
    </div>
  )
}
