import {useEffect, useState} from 'react'
import {api, EVENTS, onEvent} from '../../api'

/** At most this many lines are kept in memory; older ones drop off the top. */
export const MAX_LINES = 1_000_000
const TAIL_LINES = 5000

export function appendCapped(old: string[], more: readonly string[], cap = MAX_LINES): string[] {
  const next = old.concat(more)
  return next.length > cap ? next.slice(next.length - cap) : next
}

/**
 * The tail of an agent's log, then its new lines as the engine pushes them
 * (batched "agent:log" events). The follow ends when the view goes away.
 */
export function useLogLines(projectId: string, agentId: string) {
  const [lines, setLines] = useState<string[]>([])
  const [error, setError] = useState('')
  useEffect(() => {
    let live = true
    let offset = -1 // unknown until the tail arrives
    setLines([])
    setError('')
    const off = onEvent(EVENTS.agentLog, (b) => {
      if (b.projectId !== projectId || b.agentId !== agentId || offset < 0) return
      if (b.reset) {
        offset = b.offset
        setLines(b.lines ?? [])
        return
      }
      if (b.offset <= offset) return // already have these
      offset = b.offset
      setLines((old) => appendCapped(old, b.lines ?? []))
    })
    api.logs.tail(projectId, agentId, TAIL_LINES).then(
      (chunk) => {
        if (!live) return
        offset = chunk.offset
        setLines(chunk.lines ?? [])
        return api.logs.follow(projectId, agentId, chunk.offset)
      },
    ).catch((err: unknown) => live && setError(String(err)))
    return () => {
      live = false
      off()
      api.logs.unfollow(projectId, agentId).catch(() => {})
    }
  }, [projectId, agentId])
  return {lines, error}
}
