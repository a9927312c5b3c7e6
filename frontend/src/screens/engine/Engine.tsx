import {useState} from 'react'
import {useQueryClient} from '@tanstack/react-query'
import {toast} from 'sonner'
import {errorMessage, startEngine} from '../../api'
import {engineText} from '../../lib/pause'
import {keys, useEngineStatus} from '../../state/queries'

/** Which engine the window talks to, discreetly (the sidebar's foot); the details on hover. */
export function EngineIndicator() {
  const {data: st} = useEngineStatus()
  const {text, detail, title, tone} = engineText(st)
  return (
    <div className={`engine tone-${tone}`} data-engine={st?.state ?? ''} title={title}>
      <span className="engine-dot" aria-hidden="true">●</span>
      <span className="engine-text">{text}</span>
      {detail && <span className="engine-url">{detail}</span>}
    </div>
  )
}

/** The engine's message without what the heading says: "pid 4242: connection refused". */
export function causeOf(message: string): string {
  const m = /^The engine \(pid (\d+)\) went away: (.*)$/s.exec(message)
  if (m) return `pid ${m[1]}: ${m[2]}`
  return message.replace(/^the engine did not start: /, '')
}

/** When the engine went away (or never started): say so, and offer to run one in this window. */
export function EngineBanner() {
  const {data: st} = useEngineStatus()
  const qc = useQueryClient()
  const [busy, setBusy] = useState(false)
  if (st?.state !== 'lost' && st?.state !== 'none') return null
  const start = async () => {
    setBusy(true)
    try {
      const next = await startEngine()
      qc.setQueryData(keys.engine, next)
      // Everything the window knows came from the engine that went away.
      await qc.invalidateQueries({predicate: (q) => q.queryKey[0] !== 'engine'})
      toast.success(next.state === 'attached' ? `Attached to engine pid ${next.pid}` : 'This window runs the engine now')
    } catch (err) {
      toast.error('Cannot start an engine', {description: errorMessage(err)})
    } finally {
      setBusy(false)
    }
  }
  return (
    <div className="engine-banner" role="alert">
      <div className="engine-banner-text">
        <strong>{st.state === 'lost' ? 'The engine this window was attached to went away' : 'No engine is running'}</strong>
        {st.message && <span className="muted" title={st.message}>{causeOf(st.message)}</span>}
        <span className="muted">Agents keep running; nothing is watching them until an engine runs.</span>
      </div>
      <button type="button" className="primary" disabled={busy} onClick={() => void start()}
        title="Start the engine (a process of its own, which outlives this window); it picks up every project and re-attaches to the agents still running">
        Start an engine here
      </button>
    </div>
  )
}
