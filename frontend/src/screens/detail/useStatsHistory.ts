import {useEffect, useState} from 'react'
import {api, EVENTS, onEvent, type Agent, type Stats} from '../../api'
import {isLive} from '../../lib/status'

/** Samples kept: 5 minutes at one every 2 s, as the engine keeps them. */
export const MAX_SAMPLES = 150

/** Both lists' samples once each, oldest first, the newest MAX_SAMPLES. */
export function mergeSamples(a: readonly Stats[], b: readonly Stats[]): Stats[] {
  const by = new Map<string, Stats>()
  for (const s of [...a, ...b]) by.set(s.sampledAt, s)
  const out = [...by.values()].sort((x, y) => Date.parse(x.sampledAt) - Date.parse(y.sampledAt))
  return out.length > MAX_SAMPLES ? out.slice(out.length - MAX_SAMPLES) : out
}

/**
 * The current run's CPU and memory over the last minutes: the engine's
 * history, then each agent:stats sample as it comes. A run that ended keeps
 * its samples on screen until the next run starts.
 */
export function useStatsHistory(agent: Agent): Stats[] {
  const {projectId, id} = agent
  const run = agent.startedAt ?? ''
  const live = isLive(agent)
  const [samples, setSamples] = useState<Stats[]>([])
  useEffect(() => setSamples([]), [projectId, id, run])
  useEffect(() => {
    if (!live) return
    let alive = true
    api.agents.statsHistory(projectId, id).then(
      (h) => alive && setSamples((old) => mergeSamples(h ?? [], old)),
      () => {}, // the live samples still come
    )
    const off = onEvent(EVENTS.agentStats, (batch) => {
      const s = batch.projectId === projectId ? batch.agents[id] : undefined
      if (s) setSamples((old) => mergeSamples(old, [s]))
    })
    return () => {
      alive = false
      off()
    }
  }, [projectId, id, run, live])
  return samples
}
