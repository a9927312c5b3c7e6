import {useState} from 'react'
import {useQuery, useQueryClient} from '@tanstack/react-query'
import {api, errorMessage} from '../../api'

const FORMATS = [['json', 'Generic JSON'], ['ntfy', 'ntfy'], ['slack', 'Slack-compatible']] as const

/**
 * Notifications away from the desk: the engine's webhook channels (their
 * URLs masked), how sending to each goes, a test send, add and remove.
 * Each channel carries what enters Needs you unless the CLI said otherwise.
 */
export function WebhooksSection() {
  const qc = useQueryClient()
  const {data, error: loadError} = useQuery({queryKey: ['webhooks'], queryFn: api.webhooks.list, retry: false})
  const [name, setName] = useState('')
  const [url, setUrl] = useState('')
  const [format, setFormat] = useState<'json' | 'ntfy' | 'slack'>('json')
  const [said, setSaid] = useState('')
  const [busy, setBusy] = useState(false)
  const act = async (f: () => Promise<string>) => {
    setBusy(true)
    try {
      setSaid(await f())
      void qc.invalidateQueries({queryKey: ['webhooks']})
    } catch (err) {
      setSaid(errorMessage(err))
    }
    setBusy(false)
  }
  return (
    <section className="webhooks" aria-label="Webhook channels">
      <h3>Notifications away from the desk</h3>
      <p className="muted hint">Webhook channels get what enters Needs you (failures, questions, silence, budgets), coalesced like the desktop’s.</p>
      {loadError && <p className="field-error">{errorMessage(loadError)}</p>}
      {data && data.length === 0 && <p className="muted">No channels yet.</p>}
      {data && data.length > 0 && (
        <ul className="webhook-list">
          {data.map((c) => (
            <li key={c.id} data-webhook={c.name}>
              <strong>{c.name}</strong> <span className="muted">{c.format}</span> <code>{c.url}</code>{' '}
              {c.status.failing ? <span className="bad">failing: {c.status.lastError}</span>
                : <span className="muted">{c.status.sent} sent</span>}{' '}
              <button type="button" className="link" disabled={busy} onClick={() => void act(async () => {
                const [r] = await api.webhooks.test(c.id)
                return r?.ok ? `${c.name}: test sent.` : `${c.name}: ${r?.error ?? 'failed'}`
              })}>Test</button>{' '}
              <button type="button" className="link danger" aria-label={`Remove ${c.name}`} disabled={busy}
                onClick={() => void act(async () => {
                  await api.webhooks.remove(c.id)
                  return `Removed ${c.name}.`
                })}>Remove</button>
            </li>
          ))}
        </ul>
      )}
      <div className="row">
        <input aria-label="Channel name" placeholder="phone" value={name} size={10} onChange={(e) => setName(e.target.value)}/>
        <input aria-label="Channel URL" placeholder="https://ntfy.sh/my-topic" value={url} size={30} onChange={(e) => setUrl(e.target.value)}/>
        <select aria-label="Channel format" value={format} onChange={(e) => setFormat(e.target.value as typeof format)}>
          {FORMATS.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
        </select>
        <button type="button" disabled={busy || !name.trim() || !url.trim()} onClick={() => void act(async () => {
          const c = await api.webhooks.add({name: name.trim(), url: url.trim(), format})
          setName('')
          setUrl('')
          return `Added ${c.name}.`
        })}>Add</button>
      </div>
      {said && <p className="muted" role="status">{said}</p>}
    </section>
  )
}
