import {useEffect, useState} from 'react'
import {EVENTS, getEngine, onEvent, type EngineAlert} from '../../api'

/** A size for people. */
function bytesText(n: number): string {
  if (n >= 2 ** 30) return `${(n / 2 ** 30).toFixed(1)} GiB`
  if (n >= 2 ** 20) return `${(n / 2 ** 20).toFixed(1)} MiB`
  if (n >= 2 ** 10) return `${Math.round(n / 2 ** 10)} KiB`
  return `${n} bytes`
}

/**
 * The engine's low-space alert, first in Needs you: its data folder's disk is
 * nearly full, so logs and records may not be written. Read with the engine's
 * status, pushed again (engine:alerts) when raised or cleared.
 */
export function LowSpaceAlert() {
  const [alerts, setAlerts] = useState<EngineAlert[]>([])
  useEffect(() => {
    let live = true
    // No engine (or no window runtime): no alert to show.
    const read = () => Promise.resolve().then(getEngine).then((st) => { if (live) setAlerts(st.alerts ?? []) }, () => {})
    read()
    const offAlerts = onEvent(EVENTS.engineAlerts, (a) => setAlerts(a ?? []))
    const offEngine = onEvent(EVENTS.engineStatus, read) // another engine: its own alerts
    return () => {
      live = false
      offAlerts()
      offEngine()
    }
  }, [])
  const low = alerts.find((a) => a.kind === 'low-space')
  if (!low) return null
  return (
    <div className="pause-banner low-space" role="alert" aria-label="Disk nearly full">
      <div className="pause-line">
        <strong>Disk nearly full</strong>
        <span className="muted" title={low.message}>
          {bytesText(low.freeBytes)} free of {bytesText(low.totalBytes)}{low.path ? ` on the disk of ${low.path}` : ''}.
          Agents’ logs and records may not be written until you free some space.
        </span>
      </div>
    </div>
  )
}
