import type {Agent, Stats} from '../../api'
import {isLive} from '../../lib/status'
import {cpuText, figuresText, memText} from '../../lib/usage'
import {Sparkline, type Point} from './Sparkline'

const points = (samples: readonly Stats[], f: (s: Stats) => number | null | undefined): Point[] =>
  samples.flatMap((s) => {
    const v = f(s)
    return v == null ? [] : [{t: Date.parse(s.sampledAt), v}]
  })

/**
 * One line under the detail's head: the latest run's figures and, after
 * more than one run, all runs' cost; a click opens the Usage tab. Nothing
 * when no run reported figures.
 */
export function UsageStrip({agent: a, onOpen}: {agent: Agent; onOpen: () => void}) {
  if (!a.lastResult) return null
  const last = figuresText({...a.lastResult, runs: undefined})
  const runs = a.totals?.runs ?? 0
  const all = runs > 1 ? figuresText({runs, costUsd: a.totals?.costUsd}) : ''
  if (!last) return null
  return (
    <button type="button" className="usage-strip" onClick={onOpen} title="Run figures, CPU and memory (Usage tab)">
      <span className="usage-text"><span className="muted">Latest run</span> {last}{all && <><span className="muted"> · all</span> {all}</>}</span>
    </button>
  )
}

/** In the detail's head while the agent runs: its CPU and memory now, with their last minutes; a click opens the Usage tab. */
export function UsageNow({agent: a, samples, onOpen}: {agent: Agent; samples: Stats[]; onOpen: () => void}) {
  const now = isLive(a) ? a.stats ?? samples.at(-1) : undefined
  if (!now) return null
  return (
    <button type="button" className="usage-now" onClick={onOpen} title="CPU and memory of the last minutes (Usage tab)">
      <span className="muted">CPU</span> <Sparkline points={points(samples, (s) => s.cpuPercent)} max={100} label="CPU"/>
      <span className="num">{cpuText(now.cpuPercent) || '…'}</span>
      <span className="muted">Mem</span> <Sparkline points={points(samples, (s) => s.rssBytes)} label="Memory" headroom/>
      <span className="num">{memText(now.rssBytes)}</span>
    </button>
  )
}
