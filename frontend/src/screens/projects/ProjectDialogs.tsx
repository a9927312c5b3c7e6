import {useState} from 'react'
import {useQueryClient} from '@tanstack/react-query'
import {toast} from 'sonner'
import {api, errorMessage} from '../../api'
import {Confirm, Dialog} from '../../components/Dialog'
import {keys, useProjects} from '../../state/queries'
import {useUI} from '../../state/ui'

export function RenameProjectDialog({projectId}: {projectId: string}) {
  const close = useUI((s) => s.close)
  const qc = useQueryClient()
  const project = useProjects().data?.find((p) => p.id === projectId)
  const [name, setName] = useState(project?.name ?? '')
  const [error, setError] = useState('')
  const submit = async (e: React.FormEvent) => {
    e.preventDefault()
    try {
      await api.projects.rename(projectId, name.trim())
      await qc.invalidateQueries({queryKey: keys.projects})
      close()
    } catch (err) {
      setError(errorMessage(err))
    }
  }
  return (
    <Dialog title="Rename project" onClose={close}>
      <form className="dialog-body form" onSubmit={submit}>
        <label>Name<input name="name" value={name} onChange={(e) => setName(e.target.value)}/></label>
        {error && <p className="field-error" role="alert">{error}</p>}
        <footer className="dialog-foot">
          <button type="button" onClick={close}>Cancel</button>
          <button type="submit" className="primary" disabled={!name.trim()}>Rename</button>
        </footer>
      </form>
    </Dialog>
  )
}

/** Removing a project with live agents says so and stops them first. */
export function RemoveProjectDialog({projectId}: {projectId: string}) {
  const {close, selectProject} = useUI()
  const qc = useQueryClient()
  const project = useProjects().data?.find((p) => p.id === projectId)
  const [busy, setBusy] = useState(false)
  const live = project?.running ?? 0
  const remove = async () => {
    setBusy(true)
    try {
      await api.projects.remove(projectId, live > 0)
      selectProject(null)
      await qc.invalidateQueries({queryKey: keys.projects})
      close()
    } catch (err) {
      toast.error('Cannot remove the project', {description: errorMessage(err)})
      setBusy(false)
    }
  }
  return (
    <Confirm title="Remove project" confirmLabel={live > 0 ? `Stop ${live} and remove` : 'Remove'} danger busy={busy}
      onConfirm={remove} onClose={close}
      message={live > 0
        ? <p><strong>{live} agent{live === 1 ? ' is' : 's are'} still running</strong> in {project?.name}. Removing the project stops {live === 1 ? 'it' : 'them'} first.</p>
        : <p>Shepherd forgets {project?.name ?? 'this project'}. The folder itself is not touched.</p>}/>
  )
}
