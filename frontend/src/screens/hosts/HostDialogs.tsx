import {useState} from 'react'
import {useQueryClient} from '@tanstack/react-query'
import {api, ApiError, errorMessage, fingerprintIn} from '../../api'
import {Dialog} from '../../components/Dialog'
import {changeText} from '../../lib/hosts'
import {exact} from '../../lib/time'
import {keys, useHosts} from '../../state/queries'
import {useUI} from '../../state/ui'

/**
 * Adds a host: a name and its SSH address. The engine connects, checks the
 * host's key against known_hosts and installs its engine there; a key it
 * does not know is shown with its fingerprint to be compared and accepted,
 * a changed one is refused.
 */
export function AddHostDialog() {
  const {close, selectHost} = useUI()
  const qc = useQueryClient()
  const [name, setName] = useState('')
  const [url, setUrl] = useState('')
  const [error, setError] = useState('')
  const [unknown, setUnknown] = useState<{fingerprint: string; message: string} | null>(null)
  const [busy, setBusy] = useState(false)

  const add = async (acceptKey = '') => {
    setBusy(true)
    setError('')
    try {
      const h = await api.hosts.add(name.trim(), url.trim(), acceptKey)
      await qc.invalidateQueries({queryKey: keys.hosts})
      selectHost(h.name)
      close()
    } catch (err) {
      const fp = err instanceof ApiError && err.kind === 'HostKeyUnknown' && !acceptKey ? fingerprintIn(err.message) : ''
      if (fp) setUnknown({fingerprint: fp, message: err instanceof Error ? err.message : ''})
      else setError(errorMessage(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <Dialog title="Add host" onClose={close}>
      <form className="dialog-body form" onSubmit={(e) => {
        e.preventDefault()
        void add()
      }}>
        <p className="muted">Another machine reached over SSH (your keys, ~/.ssh/config and known_hosts): Shepherd installs its engine there and keeps one connection to it.</p>
        <label>
          Name
          <input name="name" value={name} onChange={(e) => setName(e.target.value)} placeholder="gpu-box" disabled={!!unknown}/>
        </label>
        <label>
          SSH address
          <input name="url" value={url} onChange={(e) => setUrl(e.target.value)} placeholder="ssh://you@host:22" disabled={!!unknown}/>
        </label>
        {unknown && (
          <div className="host-key" role="alert">
            <p>This host's key is not known yet. Compare its fingerprint with the one the host itself shows
              (<code>ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub</code> there) before you accept it:</p>
            <p><code data-fingerprint>{unknown.fingerprint}</code></p>
          </div>
        )}
        {error && <p className="field-error" role="alert">{error}</p>}
        {busy && <p className="muted" role="status">Connecting and readying its engine…</p>}
        <footer className="dialog-foot">
          <button type="button" onClick={close}>Cancel</button>
          {unknown
            ? <button type="button" className="primary" disabled={busy} onClick={() => void add(unknown.fingerprint)}>Accept key and add</button>
            : <button type="submit" className="primary" disabled={busy || !name.trim() || !url.trim()}>Add host</button>}
        </footer>
      </form>
    </Dialog>
  )
}

/** Forgets a host: its engine and agents keep running there. */
export function RemoveHostDialog({host}: {host: string}) {
  const {close, selectHost} = useUI()
  const qc = useQueryClient()
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  const remove = async () => {
    setBusy(true)
    try {
      await api.hosts.remove(host)
      selectHost(null)
      await qc.invalidateQueries({queryKey: keys.hosts})
      close()
    } catch (err) {
      setError(errorMessage(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <Dialog title={`Remove host ${host}`} onClose={close} guard={false}>
      <div className="dialog-body">
        <p>Shepherd forgets <strong>{host}</strong> and closes its connection. Its engine and its agents keep running there; add it again to see them.</p>
        {error && <p className="field-error" role="alert">{error}</p>}
        <footer className="dialog-foot">
          <button type="button" onClick={close}>Cancel</button>
          <button type="button" className="danger" disabled={busy} onClick={() => void remove()}>Remove host</button>
        </footer>
      </div>
    </Dialog>
  )
}

/** What happened on a host while it was away, agent by agent. */
export function HostAwayDialog({host}: {host: string}) {
  const {data: hosts = []} = useHosts()
  const {close, selectHost, selectProject, selectAgent} = useUI()
  const w = hosts.find((h) => h.name === host)?.whileAway
  const show = (projectId: string, agentId: string) => {
    close()
    selectHost(host)
    selectProject(projectId)
    selectAgent(agentId)
  }
  return (
    <Dialog title={`While ${host} was away`} onClose={close} wide guard={false}>
      <div className="dialog-body while-closed">
        {!w ? <p className="muted">Nothing happened there while it was away.</p> : (
          <>
            <p className="muted">Lost {exact(w.lost)}, back {exact(w.back)}.</p>
            {w.engineRestarted && <p>Its engine had ended and was started again; its own recovery took its agents back.</p>}
            <ul>
              {(w.agents ?? []).map((a) => (
                <li key={`${a.projectId}/${a.agentId}`} className={a.ended > 0 || a.attention ? 'bad' : undefined} data-away-agent={a.agentId}>
                  <button type="button" className="link wc-agent" title="Show this agent" onClick={() => show(a.projectId, a.agentId)}>{a.agentId}</button>
                  <span className="wc-outcome">{changeText(a)}</span>
                </li>
              ))}
            </ul>
          </>
        )}
      </div>
    </Dialog>
  )
}
