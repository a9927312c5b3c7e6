import {useState} from 'react'
import {api} from '../../api'
import {missingFor, type SandboxValues} from '../../lib/sandbox'
import {useSandboxSupport} from '../../state/queries'

interface Props {
  values: SandboxValues
  onChange: (patch: Partial<SandboxValues>) => void
  /** A folder typed but not added yet (the form adds it when saved). */
  draft: string
  onDraft: (draft: string) => void
  /** The engine's message about a tag, which names it. */
  error?: string
  /** The agent's working folder, offered as a folder to write to. */
  cwd: string
}

/** Run sandboxed or not; when sandboxed, the network and the folders it may write to, each explained. */
export function SandboxFields({values: v, onChange, draft, onDraft, error, cwd}: Props) {
  const [local, setLocal] = useState('')
  const support = useSandboxSupport().data
  const missing = v.sandboxed ? missingFor(support, v.network) : []
  // Without the network, namespaces are needed too; say when allowing it would be enough.
  const networkHelps = !v.network && missingFor(support, true).length === 0
  const add = (dir: string) => {
    const d = dir.trim()
    if (!d) return
    if (!d.startsWith('/')) return setLocal('an absolute path, such as /home/me/project')
    setLocal('')
    if (!v.writeDirs.includes(d)) onChange({writeDirs: [...v.writeDirs, d]})
    onDraft('')
  }
  const pick = async () => {
    const dir = await api.projects.pickFolder('Choose a folder it may write to').catch(() => '')
    if (dir) add(dir)
  }
  const shownError = local || error
  return (
    <fieldset className="sandbox">
      <legend>Sandbox</legend>
      <label className="check">
        <input type="checkbox" name="sandboxed" checked={v.sandboxed} onChange={(e) => onChange({sandboxed: e.target.checked})}/>
        Run sandboxed
      </label>
      {!v.sandboxed && <p className="hint muted indent">Off, it runs as you do: your network, and it may change any file you may.</p>}
      {v.sandboxed && (
        <div className="indent grants">
          <p className="hint muted">
            It may read any file, but it has no network and writes nothing except its own log — unless you allow it
            below. Anything it starts is held to the same limits.
          </p>
          <label className="check">
            <input type="checkbox" name="network" checked={v.network} onChange={(e) => onChange({network: e.target.checked})}/>
            Network
          </label>
          <p className="hint muted indent">The internet and local servers, as you have them. Claude Code and Codex need it to reach their model.</p>
          <div className="write-dirs">
            <span className="sub">Folders it may write to <span className="hint muted">(and everything inside them)</span></span>
            {v.writeDirs.length === 0
              ? <span className="hint muted">None: it cannot change any file. An agent that edits code needs its project's folder here.</span>
              : (
                <ul aria-label="Folders it may write to">
                  {v.writeDirs.map((d) => (
                    <li key={d}>
                      <code>{d}</code>
                      <button type="button" className="icon small" aria-label={`Remove ${d}`} title="It may no longer write there"
                        onClick={() => onChange({writeDirs: v.writeDirs.filter((x) => x !== d)})}>×</button>
                    </li>
                  ))}
                </ul>
              )}
            <span className="row">
              <input name="writeDir" aria-label="Add a folder it may write to" placeholder="/absolute/path/to/folder" value={draft}
                aria-invalid={!!shownError || undefined}
                onChange={(e) => {
                  onDraft(e.target.value)
                  setLocal('')
                }}
                onKeyDown={(e) => {
                  if (e.key === 'Enter') {
                    e.preventDefault()
                    add(draft)
                  }
                }}/>
              <button type="button" onClick={() => add(draft)} disabled={!draft.trim()}>Add</button>
              <button type="button" onClick={pick}>Choose…</button>
            </span>
            {cwd && !v.writeDirs.includes(cwd) && (
              <button type="button" className="link add-cwd" onClick={() => add(cwd)}>+ its working folder <code>{cwd}</code></button>
            )}
            {shownError && <span className="field-error" role="alert">{shownError}</span>}
          </div>
          {missing.length > 0 && (
            <p className="field-warn" role="status">
              This machine cannot sandbox it like this: it lacks {missing.join('; and ')}. Starting it will fail
              {networkHelps ? ' unless you allow the network' : ''}.
            </p>
          )}
        </div>
      )}
    </fieldset>
  )
}
