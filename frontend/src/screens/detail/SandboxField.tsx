import type {Grants} from '../../api'

/** The record's sandbox in words: what it may do, and the tags as stored. */
export function SandboxField({grants: g}: {grants?: Grants | null}) {
  if (!g) return <span>not sandboxed <span className="muted">(it runs as you: your network, your files)</span></span>
  const dirs = g.writeDirs ?? []
  return (
    <div className="sandbox-field" data-grants>
      <div>Sandboxed: reads any file.</div>
      <div>Network: {g.network ? 'allowed' : 'none'}.</div>
      <div>
        Writes: its own log{dirs.length ? <>, and in {dirs.map((d, i) => <span key={d}>{i > 0 && ', '}<code>{d}</code></span>)} and below</> : ' only'}.
      </div>
      {(g.permissions?.length ?? 0) > 0 && (
        <div className="muted">Tags: {g.permissions!.map((t, i) => <span key={t}>{i > 0 && ' '}<code>{t}</code></span>)}</div>
      )}
    </div>
  )
}
