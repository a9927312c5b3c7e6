import {useEffect, useState} from 'react'
import type {Agent} from '../../api'
import {GROUP_LABELS, type Group, type GroupRows, type Sort, type SortKey} from '../../lib/groups'
import {AgentRow} from './AgentRow'

/** Re-renders every second while something on screen counts time. */
export function useNow(active: boolean) {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    if (!active) return
    const t = setInterval(() => setNow(Date.now()), 1000)
    return () => clearInterval(t)
  }, [active])
  return now
}

const COLUMNS: {id: string; label: string; sort?: SortKey; title?: string}[] = [
  {id: 'agent', label: 'Agent', sort: 'name', title: 'Name and id'},
  {id: 'status', label: 'Status', sort: 'status'},
  {id: 'activity', label: 'Activity', sort: 'activity', title: 'What it is doing: busy with a tool, or silent for how long'},
  {id: 'runtime', label: 'Run time', sort: 'runtime'},
  {id: 'when', label: 'Last run', sort: 'started', title: 'When the current run started, or when the last one ended (exact times on hover)'},
  {id: 'runs', label: 'Runs', sort: 'runs', title: 'Runs, and auto-resumes (↻) since the last start by hand'},
  {id: 'cost', label: 'Cost', sort: 'cost', title: 'Cost reported by the agent (all runs)'},
  {id: 'actions', label: ''},
]

interface Props {
  groups: GroupRows[]
  selectedId: string | null
  cursorId?: string | null
  onSelect: (id: string) => void
  sort?: Sort
  onSort?: (key: SortKey) => void
  collapsed?: ReadonlySet<Group>
  onToggle?: (g: Group) => void
  now?: number
}

/** The agents of the selected project, grouped (what needs you first), one line each. */
export function AgentList({groups, selectedId, cursorId, onSelect, sort, onSort, collapsed, onToggle, now: fixedNow}: Props) {
  const ticking = useNow(fixedNow === undefined && groups.length > 0)
  const now = fixedNow ?? ticking
  return (
    <table className="agents" aria-label="Agents">
      <colgroup>{COLUMNS.map((c) => <col key={c.id} className={`col-${c.id}`}/>)}</colgroup>
      <thead>
        <tr>
          {COLUMNS.map((c) => {
            const active = sort?.key === c.sort && !!c.sort
            return (
              <th key={c.id} className={`c-${c.id}`} title={c.title}
                aria-sort={active ? (sort!.desc ? 'descending' : 'ascending') : undefined}>
                {c.sort && onSort
                  ? <button type="button" className="sort" onClick={() => onSort(c.sort!)}>
                      {c.label}{active && <span aria-hidden="true">{sort!.desc ? ' ▾' : ' ▴'}</span>}
                    </button>
                  : c.label}
              </th>
            )
          })}
        </tr>
      </thead>
      {groups.map(({group, agents}) => (
        <tbody key={group} data-group={group}>
          <tr className={`group-row g-${group}`}>
            <th colSpan={COLUMNS.length} scope="rowgroup">
              <button type="button" className="group-toggle" aria-expanded={!collapsed?.has(group)}
                onClick={() => onToggle?.(group)}>
                <span aria-hidden="true">{collapsed?.has(group) ? '▸' : '▾'}</span> {GROUP_LABELS[group]}
                <span className="count">{agents.length}</span>
              </button>
            </th>
          </tr>
          {!collapsed?.has(group) && agents.map((a: Agent) => (
            <AgentRow key={a.id} agent={a} now={now} selected={a.id === selectedId} cursor={a.id === cursorId}
              onSelect={onSelect}/>
          ))}
        </tbody>
      ))}
    </table>
  )
}
