import type {Agent, Stats} from '../../api'
import {isLive} from '../../lib/status'
import {clock} from '../../lib/time'
import {cpuText, figureRows, mib} from '../../lib/usage'
import {Sparkline, type Point} from './Sparkline'

const series = (samples: readonly Stats[], f: (s: Stats) => number | null | undefined): Point[] =>
  samples.flatMap((s) => {
    const v = f(s)
    return v == null ? [] : [{t: Date.parse(s.sampledAt), v}]
  })

function Chart({title, points, text, max, headroom}: {title: string; points: Point[]; text: (v: number) => string; max?: number; headroom?: boolean}) {
  const peak = points.reduce((m, p) => Math.max(m, p.v), 0)
  const last = points.at(-1)
  return (
    <figure className="chart">
      <figcaption>
        {title} <strong>{last ? text(last.v) : '—'}</strong>
        {points.length > 1 && <span className="muted"> · peak {text(peak)}</span>}
      </figcaption>
      <Sparkline points={points} max={max} label={`${title} over the last minutes`} area headroom={headroom}/>
    </figure>
  )
}

/** The run's CPU and memory over the last minutes, and the figures of the latest run and of all runs. */
export function UsagePanel({agent: a, samples}: {agent: Agent; samples: Stats[]}) {
  const live = isLive(a)
  const cpu = series(samples, (s) => s.cpuPercent)
  const mem = series(samples, (s) => s.rssBytes)
  const first = samples[0]?.sampledAt
  const runs = a.totals?.runs ?? 0
  return (
    <div className="usage">
      <section aria-label="CPU and memory">
        {samples.length === 0
          ? <p className="muted hint">{live
              ? 'Waiting for the first sample (every 2 s while this project is on screen)…'
              : 'Not running. CPU and memory are sampled every 2 s while an agent runs and its project is on screen.'}</p>
          : <>
              <div className="charts">
                <Chart title="CPU" points={cpu} text={cpuText} max={100}/>
                <Chart title="Memory" points={mem} text={mib} headroom/>
              </div>
              <p className="muted hint">
                Its whole process tree, since {clock(first)}{live ? '' : ' until the run ended'}; 100% is one core.
              </p>
            </>}
      </section>
      <section aria-label="Run figures">
        {!a.lastResult && !a.totals
          ? <p className="muted hint">No run has reported figures yet: Claude Code and Codex agents report their turns and
              tokens (Claude Code also its cost) when a run ends.</p>
          : (
            <table className="figures">
              <thead>
                <tr><th/><th>Latest run{a.lastResult?.at ? <span className="muted"> · {clock(a.lastResult.at)}</span> : null}</th><th>All runs <span className="muted">· {runs} reported</span></th></tr>
              </thead>
              <tbody>
                {figureRows(a.lastResult, a.totals).map(([label, last, all]) => (
                  <tr key={label}><th scope="row">{label}</th><td>{last}</td><td>{all}</td></tr>
                ))}
              </tbody>
            </table>
          )}
      </section>
    </div>
  )
}
