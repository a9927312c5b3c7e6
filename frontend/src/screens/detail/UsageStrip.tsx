import type {Agent, Stats} from '../../api'
import {isLive} from '../../lib/status'
import {cpuText, figuresText, memText} from '../../lib/usage'
import {Sparkline} from './Sparkline'

/**
 * One line under the detail's head: the latest run's figures and all runs'
 * cost, and while it runs its CPU and memory with their last minutes; a
 * click opens the Usage tab. Nothing when there is nothing to say.
 */
export function UsageStrip({agent: a, samples, onOpen}: {agent: Agent; samples: Stats[]; onOpen: () => void}) {
  const now = isLive(a) ? a.stats ?? samples.at(-1) : undefined
  const last = a.lastResult ? figuresText(a.lastResult) : ''
  const all = a.totals?.runs && a.totals.runs > 1 ? figuresText({runs: a.totals.runs, costUsd: a.totals.costUsd}) : ''
  if (!last && !now) return null
  const pts = (f: (s: Stats) => number | null | undefined) =>
    samples.flatMap((s) => (f(s) == null ? [] : [{t: Date.parse(s.sampledAt), v: f(s)!}]))
  return (
    <button type="button" className="usage-strip" onClick={onOpen} title="CPU, memory and run figures (Usage tab)">
      {last && <span className="usage-text"><span className="muted">Latest run</span> {last}{all && <><span className="muted"> · all</span> {all}</>}</span>}
      {now && (
        <span className="usage-now">
          <span className="muted">CPU</span> <Sparkline points={pts((s) => s.cpuPercent)} max={100} label="CPU"/>
          <span className="num">{cpuText(now.cpuPercent) || '…'}</span>
          <span className="muted">Mem</span> <Sparkline points={pts((s) => s.rssBytes)} label="Memory"/>
          <span className="num">{memText(now.rssBytes)}</span>
        </span>
      )}
    </button>
  )
}
