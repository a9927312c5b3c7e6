import {useCallback, useEffect, useMemo} from 'react'
import {UsageWindows} from './UsageWindows'
import {errorMessage, api, type Project} from '../../api'
import {countGroups, filterAgents, GROUP_LABELS, GROUPS, groupAgents, stoppable} from '../../lib/groups'
import {useQueryClient} from '@tanstack/react-query'
import {upsertAgent, useAgents, useEngineDown, useRunCounts, useWatchProject} from '../../state/queries'
import {useUI} from '../../state/ui'
import {AgentDetail} from '../detail/AgentDetail'
import {Bell} from '../feed/FeedPanel'
import {PauseBanner} from '../projects/PauseProject'
import {LowSpaceAlert} from '../engine/LowSpaceAlert'
import {AgentList} from './AgentList'
import {COLUMNS, shownFor} from './columns'
import {ProjectSummary} from './ProjectSummary'
import {useListKeys} from './useListKeys'

/** The selected project: its agents (what needs you first), the actions on all of them, and one agent's detail. */
export function AgentsScreen({project}: {project: Project}) {
  const {agentId, cursorId, selectAgent, open, filter, setFilter, groups: chips, toggleGroup, collapsed,
    toggleCollapsed, sort, sortBy} = useUI()
  const {data: agents = [], isLoading, error} = useAgents(project.id)
  const counts = useMemo(() => countGroups(agents), [agents])
  const shown = useMemo(() => shownFor(agents), [agents])
  const runs = useRunCounts(project.id)
  const down = useEngineDown() // then the engine's banner says why nothing loads
  useWatchProject(project.id) // CPU and memory are sampled while the project is shown
  const grouped = useMemo(() => groupAgents(filterAgents(agents, filter, chips), sort), [agents, filter, chips, sort])
  // The rows in the order shown, for ↑/↓.
  const order = useMemo(() => grouped.filter((g) => !collapsed.has(g.group)).flatMap((g) => g.agents.map((a) => a.id)),
    [grouped, collapsed])
  const selected = agents.find((a) => a.id === agentId)
  const toStop = agents.filter(stoppable).length
  const qc = useQueryClient()
  useListKeys(order, agents, (rec) => upsertAgent(qc, rec))
  // The focus on a row makes it the cursor; with the detail open, the detail follows (as ↑/↓ do).
  const onCursor = useCallback((id: string, row: boolean) => {
    const ui = useUI.getState()
    if (ui.agentId && row) {
      if (ui.agentId !== id) ui.selectAgent(id)
    } else if (ui.cursorId !== id) ui.setCursor(id)
  }, [])
  const sorted = sort.key === 'default' ? '' : `Sorted by ${COLUMNS.find((c) => c.sort === sort.key)?.label ?? sort.key}, ${sort.desc ? 'descending' : 'ascending'}`

  useEffect(() => {
    api.setTitle(`Shepherd — ${project.name} · ${agents.length} agent${agents.length === 1 ? '' : 's'}`)
  }, [project.name, agents.length])

  // The selected row stays in view when the detail opens below it.
  useEffect(() => {
    const id = cursorId ?? agentId
    if (!id) return
    document.querySelector(`tr[data-agent="${CSS.escape(id)}"]`)?.scrollIntoView?.({block: 'nearest'})
  }, [cursorId, agentId, !!selected]) // eslint-disable-line react-hooks/exhaustive-deps

  const listed = order.length
  return (
    <main className={selected ? 'main with-detail' : 'main'}>
      <header className="main-head">
        <div className="title">
          <h1 title={`${project.name}\n${project.path}`}>{project.name}</h1>
          <ProjectSummary project={project} agents={agents} attention={counts.attention} costs={shown.cost}/>
          <span className="muted path" title={project.path}>{project.path}</span>
        </div>
        <Bell projectId={project.id}/>
        <button type="button" className="primary" onClick={() => open({kind: 'createAgent'})} title="Create an agent (Claude Code or any command)">New agent</button>
        {!project.paused && (
          <button type="button" onClick={() => open({kind: 'pauseProject', projectId: project.id})}
            title="Pause every running agent of this project and hold its starts until you unpause it (asks first)">
            Pause…
          </button>
        )}
        <button type="button" disabled={toStop === 0} onClick={() => open({kind: 'stopAll'})}
          title="Stop every running agent of this project, and cancel pending keep-alive restarts (asks first)">
          Stop all{toStop ? ` (${toStop})` : ''}
        </button>
        <button type="button" className="icon" onClick={() => open({kind: 'settings'})} aria-label="Project settings" title="Project settings">⚙</button>
      </header>
      <PauseBanner project={project}/>
      <LowSpaceAlert/>
      {agents.length > 0 && (
        <div className="toolbar">
          <input type="search" data-search="agents" placeholder="Filter agents  /" aria-label="Filter agents"
            value={filter} onChange={(e) => setFilter(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Escape' || e.key === 'ArrowDown' || e.key === 'Enter') e.currentTarget.blur()
            }}/>
          <span className="chips" role="group" aria-label="Show">
            {GROUPS.map((g) => (
              <button key={g} type="button" className={`chip g-${g}`} aria-pressed={chips.has(g)}
                disabled={counts[g] === 0 && !chips.has(g)} onClick={() => toggleGroup(g)}>
                {GROUP_LABELS[g]} <span className="count">{counts[g]}</span>
              </button>
            ))}
          </span>
          <UsageWindows ended={agents.reduce((m, a) => (a.stoppedAt && a.stoppedAt > m ? a.stoppedAt : m), '')}/>
          {/* Read out when the filter, a chip or a group changes what is listed, and when the sort changes. */}
          <span className="muted shown" role="status">
            {listed === agents.length ? `${agents.length} agent${agents.length === 1 ? '' : 's'}` : `${listed} of ${agents.length}`}
          </span>
          <span className="sr-only" role="status">{sorted}</span>
          <span className="muted keys" title="↑/↓ move · Enter opens · s starts or stops · a acknowledges · / filters · Esc closes">↑↓ Enter s a /</span>
        </div>
      )}
      {error && !down && <p className="field-error">{errorMessage(error)}</p>}
      {!isLoading && agents.length === 0 && (
        <div className="empty-agents">
          <p>No agents in this project yet. An agent is a command Shepherd runs and watches — Claude Code or anything else.</p>
          <button type="button" className="primary" onClick={() => open({kind: 'createAgent'})}>Create the first agent</button>
        </div>
      )}
      {agents.length > 0 && (
        <div className="list-wrap">
          <AgentList groups={grouped} selectedId={agentId} cursorId={cursorId} onSelect={selectAgent} onCursor={onCursor}
            sort={sort} onSort={sortBy} collapsed={collapsed} onToggle={toggleCollapsed} shown={shown} runs={runs}/>
          {listed === 0 && <p className="muted empty-filter">No agent matches the filter.</p>}
        </div>
      )}
      {selected && <AgentDetail key={selected.id} agent={selected} onClose={() => selectAgent(null)}/>}
    </main>
  )
}

