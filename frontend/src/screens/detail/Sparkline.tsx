export interface Point {
  /** Time, ms. */
  t: number
  v: number
}

/**
 * A series over time as a line (and the area under it) scaled from 0 to its
 * peak (or max, or a quarter above the peak), across the time it covers, in
 * a box that stretches to its container.
 */
export function Sparkline({points, max, label, area, headroom}: {points: Point[]; max?: number; label: string; area?: boolean; headroom?: boolean}) {
  const W = 300
  const H = 60
  // Headroom: a level series (memory) sits below the top instead of filling the box.
  const top = Math.max(max ?? 0, ...points.map((p) => p.v * (headroom ? 1.25 : 1)), 1e-9)
  const t0 = points[0]?.t ?? 0
  const span = (points.at(-1)?.t ?? 0) - t0
  const y = (v: number) => (H - (Math.max(0, v) / top) * (H - 2) - 1).toFixed(1)
  const xy = points.length === 1
    ? [`0,${y(points[0].v)}`, `${W},${y(points[0].v)}`] // one sample: a flat line
    : points.map((p) => `${(span > 0 ? ((p.t - t0) / span) * W : W).toFixed(1)},${y(p.v)}`)
  return (
    <svg className="spark" viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={label}>
      {xy.length > 0 && area && <polygon points={`0,${H} ${xy.join(' ')} ${W},${H}`} className="spark-area"/>}
      {xy.length > 0 && <polyline points={xy.join(' ')} className="spark-line" vectorEffect="non-scaling-stroke" fill="none"/>}
    </svg>
  )
}
