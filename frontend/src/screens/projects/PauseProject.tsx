import {useState} from 'react'
import {useQueryClient} from '@tanstack/react-query'
import {toast} from 'sonner'
import {api, errorMessage, type Project} from '../../api'
import {Dialog} from '../../components/Dialog'
import {PauseIcon} from '../../components/Icons'
import {pausable, pausedSince, pauseProgress, progressText} from '../../lib/pause'
import {keys, useAgents, useProjects} from '../../state/queries'
import {useUI} from '../../state/ui'
import {useNow} from '../agents/AgentList'

/** Pausing a project asks first, with the count: an optional note, and whether to wait for tool calls in flight. */
export function PauseProjectDialog({projectId}: {projectId: string}) {
  const {close, setPausing} = useUI()
  const qc = useQueryClient()
  const project = useProjects().data?.find((p) => p.id === projectId)
  const {data: agents = []} = useAgents(projectId)
  const running = agents.filter(pausable)
  const claude = running.some((a) => a.profile === 'claude-stream-json')
  const [note, setNote] = useState('')
  const [now, setNow] = useState(false)
  const name = project?.name ?? 'this project'

  const submit = (e: React.FormEvent) => {
    e.preventDefault()
    const ids = running.map((a) => a.id)
    setPausing(projectId, ids)
    close()
    // It returns once every agent is paused; the banner shows how far it is meanwhile.
    api.projects.pause(projectId, note.trim(), now).then((res) => {
      const failed = (res ?? []).filter((r) => r.error)
      if (failed.length) {
        toast.warning(`${failed.length} agent${failed.length === 1 ? '' : 's'} of ${name} could not be paused`,
          {description: failed.map((r) => `${r.agentId}: ${r.error}`).join('\n')})
      } else if (ids.length) {
        toast.success(`Paused ${name}`, {description: `${ids.length} agent${ids.length === 1 ? '' : 's'} paused`})
      }
    }, (err: unknown) => {
      toast.error(`Cannot pause ${name}`, {description: errorMessage(err)})
    }).finally(() => {
      setPausing(projectId, null)
      void qc.invalidateQueries({queryKey: keys.projects})
    })
  }
  return (
    <Dialog title={`Pause ${name}`} onClose={close}>
      <form className="dialog-body form" onSubmit={submit}>
        <p className="plain">
          {running.length > 0
            ? <><strong>{running.length} running agent{running.length === 1 ? ' is' : 's are'} paused</strong>{claude && !now
              ? ' (a Claude agent busy with a tool call finishes that call first, so its session keeps the result)' : ''}.{' '}</>
            : 'No agent is running. '}
          Until you unpause it, nothing of {name} starts: starts, resumes and keep-alive restarts wait in its queue.
        </p>
        <label>
          Note <span className="hint">(optional; shown on the banner)</span>
          <input name="note" value={note} maxLength={1000} placeholder="rate limit until 15:00"
            onChange={(e) => setNote(e.target.value)}/>
        </label>
        {running.length > 0 && (
          <label className="check">
            <input type="checkbox" name="now" checked={now} onChange={(e) => setNow(e.target.checked)}/>
            Don’t wait for a tool call in flight: pause at once
          </label>
        )}
        <footer className="dialog-foot">
          <button type="button" onClick={close}>Cancel</button>
          <button type="submit" className="primary">
            {running.length > 0 ? `Pause ${running.length} agent${running.length === 1 ? '' : 's'}` : 'Pause project'}
          </button>
        </footer>
      </form>
    </Dialog>
  )
}

/** A paused project says so above its agents: since when, the note, a pause under way, a broken signal file; and Unpause. */
export function PauseBanner({project}: {project: Project}) {
  const ids = useUI((s) => s.pausing[project.id])
  const {data: agents = []} = useAgents(project.id)
  const [busy, setBusy] = useState(false)
  const qc = useQueryClient()
  const now = useNow(!!project.paused)
  if (!project.paused && !ids) return null
  const progress = ids && ids.length > 0 ? progressText(pauseProgress(agents, ids)) : ''
  const unpause = async () => {
    setBusy(true)
    try {
      await api.projects.unpause(project.id)
      await qc.invalidateQueries({queryKey: keys.projects})
    } catch (err) {
      toast.error(`Cannot unpause ${project.name}`, {description: errorMessage(err)})
    } finally {
      setBusy(false)
    }
  }
  return (
    <div className="pause-banner" role="status" aria-label="Project paused">
      <div className="pause-line">
        <span className="pause-icon"><PauseIcon size={12}/></span>
        <strong className="pause-since">{project.paused ? pausedSince(project, now) : 'Pausing'}</strong>
        {project.pauseNote && <span className="pause-note" title={project.pauseNote}>“{project.pauseNote}”</span>}
        <span className="pause-what muted">
          {progress || 'Nothing of this project starts; starts wait in its queue.'}
        </span>
        {project.paused && (
          <button type="button" className="primary" disabled={busy} onClick={() => void unpause()}
            title="Resume the project: the agents paused with it go through the queue in the order they were paused">
            Unpause
          </button>
        )}
      </div>
      {project.pauseProblem && <p className="pause-problem" role="alert">{project.pauseProblem}</p>}
    </div>
  )
}
