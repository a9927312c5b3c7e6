import {useDeferredValue, useEffect, useLayoutEffect, useMemo, useRef, useState} from 'react'
import {useVirtualizer} from '@tanstack/react-virtual'

export const ROW_HEIGHT = 18

interface Props {
  lines: readonly string[]
  search?: string
}

/**
 * A virtualised log: only the rows in view are in the DOM, so a log of a
 * million lines scrolls as smoothly as ten. It follows new lines while the
 * view is at the bottom and pauses when the user scrolls up.
 */
export function LogView({lines, search = ''}: Props) {
  const q = useDeferredValue(search.trim().toLowerCase())
  const shown = useMemo(() => {
    if (!q) return lines
    return lines.filter((l) => l.toLowerCase().includes(q))
  }, [lines, q])
  const ref = useRef<HTMLDivElement>(null)
  const [following, setFollowing] = useState(true)
  const [seen, setSeen] = useState(shown.length)
  const v = useVirtualizer({
    count: shown.length,
    getScrollElement: () => ref.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 20,
    initialRect: {width: 800, height: 400},
  })

  useLayoutEffect(() => {
    const el = ref.current
    if (!following || !el) return
    el.scrollTop = shown.length * ROW_HEIGHT
    setSeen(shown.length)
  }, [shown.length, following])

  useEffect(() => {
    if (following) setSeen(shown.length)
  }, [following, shown.length])

  const onScroll = () => {
    const el = ref.current
    if (!el) return
    const bottom = v.getTotalSize() - (el.scrollTop + el.clientHeight)
    setFollowing(bottom <= ROW_HEIGHT * 2)
  }
  const jump = () => {
    setFollowing(true)
    if (ref.current) ref.current.scrollTop = shown.length * ROW_HEIGHT
  }
  const fresh = Math.max(0, shown.length - seen)

  return (
    <div className="logview">
      <div className="log-status" aria-live="polite">
        {q ? `${shown.length} matching line${shown.length === 1 ? '' : 's'}` : `${lines.length} line${lines.length === 1 ? '' : 's'}`}
        {following
          ? <span className="following"> · following</span>
          : <button type="button" className="link" onClick={jump}>
              Paused{fresh > 0 ? ` — ${fresh} new line${fresh === 1 ? '' : 's'}` : ''} · jump to end
            </button>}
      </div>
      <div ref={ref} className="log-scroll" onScroll={onScroll} role="log" aria-label="Log">
        <div style={{height: v.getTotalSize(), position: 'relative'}}>
          {v.getVirtualItems().map((row) => (
            <div key={row.index} className="log-line" data-index={row.index}
              style={{position: 'absolute', top: 0, left: 0, right: 0, height: ROW_HEIGHT, transform: `translateY(${row.start}px)`}}>
              {shown[row.index]}
            </div>
          ))}
        </div>
      </div>
    </div>
  )
}
