import type {Marker} from '../../lib/runs'
import {runTitle} from '../../lib/runs'
import {clock, exact} from '../../lib/time'

/** The line between two runs: "Run 3 · auto-resumed after 5 min silent · session 5f0c…", and how the one before ended. */
export function RunMarker({marker: {run, earlier}, compact}: {marker: Marker; compact?: boolean}) {
  const title = runTitle(run)
  return (
    <div className={compact ? 'run-marker compact' : 'run-marker'} data-run={run.n} role="separator" aria-label={title}
      title={`${title}\nstarted ${exact(run.startedAt)}${run.prevEnd ? `\nthe run before: ${run.prevEnd}` : ''}${run.end ? `\nthis run: ${run.end}` : ''}`}>
      <span className="run-title">{title}</span>
      <span className="run-meta">
        {clock(run.startedAt)}
        {run.prevEnd && <> · the run before: {run.prevEnd}</>}
        {earlier && <> · began before the lines shown</>}
      </span>
      {run.prompt && !compact && <p className="run-prompt" data-user-turn><span className="who">You</span> {run.prompt}</p>}
    </div>
  )
}
