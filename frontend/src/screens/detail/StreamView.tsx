import {Fragment, useDeferredValue, useEffect, useLayoutEffect, useMemo, useRef} from 'react'
import type {Marker} from '../../lib/runs'
import {duration} from '../../lib/time'
import {money} from '../../lib/usage'
import {RunMarker} from './RunMarker'
import {highlight} from './search'
import {itemText, parseStreamFrom, type StreamItem} from './streamJson'

const SHOWN = 400

function Item({item, q, current}: {item: StreamItem; q: string; current: boolean}) {
  const h = (t: string) => highlight(t, q, current)
  switch (item.kind) {
    case 'init':
      return <div className="st-init">Session <code>{h(item.sessionId)}</code>{item.model && <> · {item.model}</>}</div>
    case 'text':
      return <div className={`st-text st-${item.role}`}>{h(item.text)}</div>
    case 'tool':
      return <div className="st-tool"><span className="st-tool-name">⚙ {h(item.name)}</span> <code>{h(item.input)}</code></div>
    case 'toolResult':
      return <div className={item.isError ? 'st-tool-result bad' : 'st-tool-result'}>{h(item.text.slice(0, 2000))}</div>
    case 'result':
      return (
        <div className={item.ok ? 'st-result ok' : 'st-result bad'} role="status">
          <strong>{item.ok ? '✔ Finished' : `✖ Ended with ${item.subtype || 'an error'}`}</strong>
          {item.turns !== undefined && <span>{item.turns} turns</span>}
          {item.durationMs !== undefined && <span>{duration(item.durationMs)}</span>}
          {item.costUsd !== undefined && <span>{money(item.costUsd)}</span>}
          {item.sessionId && <span>session <code>{item.sessionId}</code></span>}
          {item.text && <div className="st-result-text">{h(item.text)}</div>}
        </div>
      )
    case 'raw':
      return <div className="st-raw">{h(item.text)}</div>
  }
}

interface Props {
  lines: readonly string[]
  markers?: readonly Marker[]
  search?: string
  current?: number
  onMatches?: (total: number) => void
  jump?: {seq: number; run: number} | null
}

/** Claude Code's stream-json log as a conversation: assistant text, tool calls, the result line, and where each run began. */
export function StreamView({lines, markers = [], search = '', current = -1, onMatches, jump}: Props) {
  const q = useDeferredValue(search.trim().toLowerCase())
  const items = useMemo(() => parseStreamFrom(lines, lines.length - SHOWN * 2).slice(-SHOWN), [lines])
  const matches = useMemo(() => {
    if (!q) return []
    const out: number[] = []
    items.forEach((p, i) => itemText(p.item).toLowerCase().includes(q) && out.push(i))
    return out
  }, [items, q])
  useEffect(() => {
    onMatches?.(matches.length)
  }, [matches, onMatches])

  // Markers go before the first item of their line; one that began before the first item heads the view.
  const firstLine = items.length ? items[0].line : 0
  const before = new Map<number, Marker[]>()
  let head: Marker | undefined
  for (const m of markers) {
    if (m.line < firstLine || m.earlier) {
      head = {...m, earlier: true}
      continue
    }
    const i = items.findIndex((p) => p.line >= m.line)
    if (i < 0) continue
    before.set(i, [...(before.get(i) ?? []), m])
  }
  if (head && before.get(0)?.some((m) => m.line === firstLine)) head = undefined

  const ref = useRef<HTMLDivElement>(null)
  const atBottom = useRef(true)
  useLayoutEffect(() => {
    const el = ref.current
    if (el && atBottom.current) el.scrollTop = el.scrollHeight
  }, [items])
  const onScroll = () => {
    const el = ref.current
    if (el) atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40
  }
  const cur = current >= 0 && current < matches.length ? matches[current] : -1
  useEffect(() => {
    if (cur < 0) return
    atBottom.current = false
    ref.current?.querySelector(`[data-item="${cur}"]`)?.scrollIntoView?.({block: 'center'})
  }, [cur, q])
  useEffect(() => {
    if (!jump) return
    atBottom.current = false
    ref.current?.querySelector(`[data-run="${jump.run}"]`)?.scrollIntoView?.({block: 'start'})
  }, [jump?.seq]) // eslint-disable-line react-hooks/exhaustive-deps

  if (items.length === 0) return <p className="muted log-empty">Nothing in the log yet.</p>
  const matchSet = new Set(matches)
  return (
    <div className="stream" aria-label="Conversation" ref={ref} onScroll={onScroll} tabIndex={0}>
      {items.length >= SHOWN && <p className="muted">The last {SHOWN} entries; Raw shows the whole log.</p>}
      {head && <RunMarker marker={head}/>}
      {items.map((p, i) => (
        <Fragment key={i}>
          {before.get(i)?.map((m) => <RunMarker key={`m${m.run.n}`} marker={m}/>)}
          <div data-item={i} className={matchSet.has(i) ? (i === cur ? 'st-item match current' : 'st-item match') : 'st-item'}>
            <Item item={p.item} q={matchSet.has(i) ? q : ''} current={i === cur}/>
          </div>
        </Fragment>
      ))}
    </div>
  )
}
