import {useState} from 'react'
import {arrowFocus} from '../../components/focus'
import {PauseIcon} from '../../components/Icons'
import {loadText} from '../../lib/pause'
import {useAttentionCounts, useProjects} from '../../state/queries'
import {EngineIndicator} from '../engine/Engine'
import {useUI} from '../../state/ui'
import {Machines} from '../hosts/Machines'

/**
 * The list of known projects with their counts; selecting one loads it. One
 * project is in the Tab order (the one the focus was last on, else the
 * selected one); ↑ ↓ Home End move among them, Enter or Space selects.
 */
export function ProjectSwitcher() {
  const {data: projects = []} = useProjects()
  const {projectId, selectProject, open, host} = useUI()
  const attention = useAttentionCounts(projects)
  const [focused, setFocused] = useState<string | null>(null)
  const entry = [focused, projectId].find((id) => id && projects.some((p) => p.id === id)) ?? projects[0]?.id
  return (
    <nav className="sidebar" aria-label="Projects">
      <div className="sidebar-head">
        <h2>{host ? `Projects on ${host}` : 'Projects'}</h2>
        <button type="button" className="icon" aria-label="Add project" title="Add project"
          onClick={() => open({kind: 'addProject'})}>+</button>
      </div>
      <Machines>
      <ul onKeyDown={(e) => {
        if (!(e.target as Element).matches('button.project') || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return
        arrowFocus(e, Array.from(e.currentTarget.querySelectorAll<HTMLElement>('button.project')))
      }}>
        {projects.map((p) => (
          <li key={p.id}>
            <button type="button" className={p.id === projectId ? 'project selected' : 'project'} tabIndex={p.id === entry ? 0 : -1}
              aria-current={p.id === projectId ? 'true' : undefined} onFocus={() => setFocused(p.id)} onClick={() => selectProject(p.id)}>
              <span className="project-name">{p.name}</span>
              <span className="project-path" title={p.path}>{p.path}</span>
              {p.loaded && (
                <span className="project-counts">
                  <span className={p.paused ? 'load paused' : 'load'} data-load
                    title={p.paused ? `Paused${p.pauseNote ? `: ${p.pauseNote}` : ''}` : 'Agents running (of the limit) and waiting in the queue'}>
                    {p.paused && <PauseIcon size={9}/>} {loadText(p)}
                  </span>
                  {(attention.get(p.id) ?? 0) > 0 && (
                    <span className="attention" data-attention={attention.get(p.id)} title="Agents in Needs you">⚠ {attention.get(p.id)}</span>
                  )}
                </span>
              )}
            </button>
            {p.id === projectId && (
              <span className="project-actions">
                <button type="button" className="link" onClick={() => open({kind: 'renameProject', projectId: p.id})}>Rename</button>
                <button type="button" className="link danger" onClick={() => open({kind: 'removeProject', projectId: p.id})}>Remove</button>
              </span>
            )}
          </li>
        ))}
      </ul>
      </Machines>
      <div className="sidebar-foot">
        <EngineIndicator/>
        <button type="button" className="link" onClick={() => open({kind: 'addHost'})} title="Another machine's agents, over SSH">
          Add host…
        </button>
        <button type="button" className="link" onClick={() => open({kind: 'prefs'})} title="Shepherd's own preferences, for every project">
          Preferences
        </button>
      </div>
    </nav>
  )
}
