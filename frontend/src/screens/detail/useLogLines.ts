import {useEffect, useState} from 'react'
import {api, EVENTS, onEvent} from '../../api'
import {lineStarts} from '../../lib/runs'

/**
 * At most this many lines are kept in memory; older ones drop off the top
 * (the whole log stays on disk: `shepherd logs`). A view left open on a
 * chatty agent for hours must not grow the window without end.
 */
export const MAX_LINES = 20_000
const TAIL_LINES = 5000

export function appendCapped<T>(old: T[], more: readonly T[], cap = MAX_LINES): T[] {
  const next = old.concat(more)
  return next.length > cap ? next.slice(next.length - cap) : next
}

interface Log {
  lines: string[]
  /** The byte offset in agent.log where each line starts (for the run markers). */
  starts: number[]
}

const EMPTY: Log = {lines: [], starts: []}

/**
 * The tail of an agent's log, then its new lines as the engine pushes them
 * (batched "agent:log" events). The follow ends when the view goes away.
 */
export function useLogLines(projectId: string, agentId: string) {
  const [log, setLog] = useState<Log>(EMPTY)
  const [error, setError] = useState('')
  useEffect(() => {
    let live = true
    let offset = -1 // unknown until the tail arrives
    setLog(EMPTY)
    setError('')
    const off = onEvent(EVENTS.agentLog, (b) => {
      if (b.projectId !== projectId || b.agentId !== agentId || offset < 0) return
      const lines = b.lines ?? []
      if (b.reset) {
        offset = b.offset
        setLog({lines, starts: lineStarts(lines, b.offset)})
        return
      }
      if (b.offset <= offset) return // already have these
      offset = b.offset
      const starts = lineStarts(lines, b.offset)
      setLog((old) => ({lines: appendCapped(old.lines, lines), starts: appendCapped(old.starts, starts)}))
    })
    api.logs.tail(projectId, agentId, TAIL_LINES).then(
      (chunk) => {
        if (!live) return
        offset = chunk.offset
        const lines = chunk.lines ?? []
        setLog({lines, starts: lineStarts(lines, chunk.offset)})
        return api.logs.follow(projectId, agentId, chunk.offset)
      },
    ).catch((err: unknown) => live && setError(String(err)))
    return () => {
      live = false
      off()
      api.logs.unfollow(projectId, agentId).catch(() => {})
    }
  }, [projectId, agentId])
  return {lines: log.lines, starts: log.starts, error}
}
