import {useState} from 'react'
import {useQueryClient} from '@tanstack/react-query'
import {api, errorMessage} from '../../api'
import {Dialog} from '../../components/Dialog'
import {keys} from '../../state/queries'
import {useUI} from '../../state/ui'

/** Adds a project: the native folder picker, or a path typed in. */
export function AddProjectDialog() {
  const {close, selectProject, host} = useUI()
  const qc = useQueryClient()
  const [path, setPath] = useState('')
  const [name, setName] = useState('')
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)

  const pick = async () => {
    try {
      const dir = await api.projects.pickFolder('Choose the project folder')
      if (dir) setPath(dir)
    } catch (err) {
      setError(errorMessage(err))
    }
  }
  const submit = async (e: React.FormEvent) => {
    e.preventDefault()
    setBusy(true)
    setError('')
    try {
      const p = await api.projects.add(path.trim(), name.trim())
      await qc.invalidateQueries({queryKey: keys.projects})
      selectProject(p.id)
      close()
    } catch (err) {
      setError(errorMessage(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <Dialog title={host ? `Add project on ${host}` : 'Add project'} onClose={close}>
      <form className="dialog-body form" onSubmit={submit}>
        <label>
          {host ? `Folder on ${host} (its absolute path there)` : 'Folder'}
          <span className="row">
            <input name="path" value={path} onChange={(e) => setPath(e.target.value)}
              placeholder="/home/you/src/app" aria-invalid={!!error}/>
            {/* The folder picker sees this computer only. */}
            {!host && <button type="button" onClick={pick}>Choose…</button>}
          </span>
        </label>
        <label>
          Name <span className="hint">(optional; the folder's name by default)</span>
          <input name="name" value={name} onChange={(e) => setName(e.target.value)}/>
        </label>
        {error && <p className="field-error" role="alert">{error}</p>}
        <footer className="dialog-foot">
          <button type="button" onClick={close}>Cancel</button>
          <button type="submit" className="primary" disabled={busy || !path.trim()}>Add project</button>
        </footer>
      </form>
    </Dialog>
  )
}
