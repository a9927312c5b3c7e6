import {useEffect, useState} from 'react'
import {useQueryClient} from '@tanstack/react-query'
import {Toaster, toast} from 'sonner'
import {api, errorMessage} from './api'
import {keys, useEngineDown, useEngineEvents, useHosts, useProjects} from './state/queries'
import {useUI, type Dialog} from './state/ui'
import {OVERLAY_Z, useDialogOpen} from './components/Dialog'
import {useNoSelectAll} from './components/useNoSelectAll'
import {Tooltips} from './components/Tooltips'
import {AgentFormDialog, RemoveAgentDialog, StopAllDialog} from './screens/agents/AgentDialogs'
import {EngineBanner} from './screens/engine/Engine'
import {useShowWhileClosed, WhileClosedDialog} from './screens/engine/WhileClosed'
import {FeedPanel} from './screens/feed/FeedPanel'
import {AgentsScreen} from './screens/agents/AgentsScreen'
import {AddProjectDialog} from './screens/projects/AddProjectDialog'
import {EmptyState} from './screens/projects/EmptyState'
import {PauseProjectDialog} from './screens/projects/PauseProject'
import {RemoveProjectDialog, RenameProjectDialog} from './screens/projects/ProjectDialogs'
import {ProjectSwitcher} from './screens/projects/ProjectSwitcher'
import {PrefsDialog, SettingsDialog} from './screens/settings/SettingsDialog'
import {AddHostDialog, HostAwayDialog, RemoveHostDialog} from './screens/hosts/HostDialogs'

function Dialogs({dialog}: {dialog: Dialog | null}) {
  switch (dialog?.kind) {
    case 'addProject': return <AddProjectDialog/>
    case 'renameProject': return <RenameProjectDialog projectId={dialog.projectId}/>
    case 'removeProject': return <RemoveProjectDialog projectId={dialog.projectId}/>
    case 'createAgent': return <AgentFormDialog/>
    case 'editAgent': return <AgentFormDialog agentId={dialog.agentId}/>
    case 'removeAgent': return <RemoveAgentDialog agentId={dialog.agentId}/>
    case 'settings': return <SettingsDialog/>
    case 'prefs': return <PrefsDialog/>
    case 'stopAll': return <StopAllDialog/>
    case 'pauseProject': return <PauseProjectDialog projectId={dialog.projectId}/>
    case 'whileClosed': return <WhileClosedDialog/>
    case 'addHost': return <AddHostDialog/>
    case 'removeHost': return <RemoveHostDialog host={dialog.host}/>
    case 'hostAway': return <HostAwayDialog host={dialog.host}/>
    default: return null
  }
}

/** Below the dialogs' backdrop, above the feed panel (20). */
const UNDER_DIALOGS = OVERLAY_Z - 5

export default function App() {
  useEngineEvents()
  const modal = useDialogOpen()
  useShowWhileClosed()
  const qc = useQueryClient()
  const {data: projects, isLoading, error} = useProjects()
  const {projectId, selectProject, dialog, feedOpen, host} = useUI()
  const hosts = useHosts().data ?? []
  const project = projects?.find((p) => p.id === projectId)
  const down = useEngineDown()
  useNoSelectAll()

  // Another machine shown: the engine's calls go there from now on, and
  // what the window holds of the one before is read again.
  const [shown, setShown] = useState<string | null>(null)
  useEffect(() => {
    if (host === shown) return
    let live = true
    void Promise.resolve(api.hosts.use(host)).catch(() => {}).then(() => {
      if (!live) return
      setShown(host)
      void qc.resetQueries({predicate: (q) => q.queryKey[0] !== 'engine' && q.queryKey[0] !== 'hosts'})
    })
    return () => {
      live = false
    }
  }, [host, qc]) // eslint-disable-line react-hooks/exhaustive-deps

  // Fall back to the first project when none (or an unknown one) is selected.
  useEffect(() => {
    if (projects && projects.length > 0 && !project) selectProject(projects[0].id)
  }, [projects, project, selectProject])

  // Selecting a project runs the engine's load-time sync; its summary comes as a project:synced toast.
  useEffect(() => {
    if (!projectId || !project || shown !== host) return
    api.projects.select(projectId).then(
      () => qc.invalidateQueries({queryKey: keys.agents(projectId)}),
      (err: unknown) => toast.error('Cannot load the project', {description: errorMessage(err)}),
    )
  }, [projectId, !!project, qc, shown === host]) // eslint-disable-line react-hooks/exhaustive-deps

  useEffect(() => {
    if (projects && projects.length === 0) api.setTitle('Shepherd')
  }, [projects])

  let body
  // Projects already shown stay shown when a refetch fails (the engine went away: its banner says so).
  // With no engine, its banner is the one place that says so.
  if (error && !projects) body = <main className="empty"><h1>Shepherd</h1>{!down && <p className="field-error">{errorMessage(error)}</p>}</main>
  else if (isLoading) body = <main className="empty"><p className="muted">Loading…</p></main>
  else if (!projects?.length) body = <EmptyState/>
  else if (shown !== host) body = <main className="empty"><p className="muted">Loading…</p></main>
  else body = project ? <AgentsScreen project={project}/> : null

  return (
    <div className="shell">
      {((projects && projects.length > 0) || hosts.length > 0 || host !== null) && <ProjectSwitcher/>}
      <div className="column">
        <EngineBanner/>
        {body}
      </div>
      {feedOpen && projects && projects.length > 0 && <FeedPanel/>}
      <Dialogs dialog={dialog}/>
      {/* A toast never covers a dialog's buttons: while one is open, toasts show under its backdrop. */}
      <Toaster richColors closeButton position="bottom-right" theme="system" style={modal ? {zIndex: UNDER_DIALOGS} : undefined}/>
      <Tooltips/>
    </div>
  )
}
