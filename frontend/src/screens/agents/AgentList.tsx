import {useEffect, useMemo, useState} from 'react'
import {LIVE, type Agent} from '../../api'
import {useMedia} from '../../components/useMedia'
import {spendText} from '../../lib/budget'
import {money} from '../../lib/usage'
import {costOf, GROUP_LABELS, type Group, type GroupRows, type Sort, type SortKey} from '../../lib/groups'
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

export type ColumnId = 'agent' | 'status' | 'activity' | 'runtime' | 'when' | 'runs' | 'cost' | 'cpu' | 'mem' | 'actions'

const COLUMNS: {id: ColumnId; label: string; sort?: SortKey; title?: string}[] = [
  {id: 'agent', label: 'Agent', sort: 'name', title: 'Name and id'},
  {id: 'status', label: 'Status', sort: 'status'},
  {id: 'activity', label: 'Activity', sort: 'activity', title: 'What it is doing: busy with a tool, or silent for how long'},
  {id: 'runtime', label: 'Run time', sort: 'runtime'},
  {id: 'when', label: 'Last run', sort: 'started', title: 'When the current run started, or when the last one ended (exact times on hover)'},
  {id: 'runs', label: 'Runs', sort: 'runs', title: 'Runs, and auto-resumes (↻) since the last start by hand'},
  {id: 'cost', label: 'Cost', sort: 'cost', title: 'What the agent’s runs cost, as it reported (all runs)'},
  {id: 'cpu', label: 'CPU', sort: 'cpu', title: 'CPU of a running agent and everything it started (100% = one core), sampled every 2 s'},
  {id: 'mem', label: 'Mem', sort: 'mem', title: 'Memory (resident) of a running agent and everything it started'},
  {id: 'actions', label: ''},
]

export interface Shown {
  /** Some agent of the project reported a cost. */
  cost: boolean
  /** Some agent of the project is running: CPU and memory. */
  stats: boolean
}

/** Whether to show the cost and the CPU and memory columns, for these agents (the whole project's). */
export const shownFor = (agents: readonly Agent[]): Shown => ({
  cost: agents.some((a) => costOf(a) != null),
  stats: agents.some((a) => LIVE.has(a.status)),
})

/**
 * The columns shown: cost only when some agent reports one, CPU and memory
 * only while some agent runs; in a narrow window with those, or with a wide
 * cost column ("$0.0003 / $0.0002"), "Last run" makes room (its times are
 * also in the run time's tooltip), so the agents' names keep theirs.
 */
export function columnsFor(shown: Shown, narrow: boolean, wideCost = false): ColumnId[] {
  return COLUMNS.map((c) => c.id).filter((id) => {
    if (id === 'cost') return shown.cost
    if (id === 'cpu' || id === 'mem') return shown.stats
    if (id === 'when') return !(narrow && (shown.stats || (wideCost && shown.cost)))
    return true
  })
}

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
  /** Which optional columns to show (default: from the agents listed). */
  shown?: Shown
  /** Runs started per agent, from the project's recent events. */
  runs?: Readonly<Record<string, number>>
}

/** The agents of the selected project, grouped (what needs you first), one line each. */
export function AgentList({groups, selectedId, cursorId, onSelect, sort, onSort, collapsed, onToggle, now: fixedNow, shown, runs}: Props) {
  const ticking = useNow(fixedNow === undefined && groups.length > 0)
  const now = fixedNow ?? ticking
  const narrow = useMedia('(max-width: 1100px)')
  const own = useMemo(() => shownFor(groups.flatMap((g) => g.agents)), [groups])
  const show = shown ?? own
  // The cost column is as wide as its widest amount needs ("$0.0003 / $0.0002" keeps its digits).
  const costChars = useMemo(() => Math.max(0, ...groups.flatMap((g) => g.agents).map((a) => (spendText(a) || money(costOf(a))).length)),
    [groups])
  const ids = columnsFor(show, narrow, costChars > 13).join(' ')
  const cols = useMemo(() => new Set(ids.split(' ') as ColumnId[]), [ids])
  const columns = COLUMNS.filter((c) => cols.has(c.id))
  const colStyle = (id: ColumnId) => (id === 'cost' && costChars > 6 ? {width: `calc(${costChars * 0.6}rem + 1rem)`} : undefined)
  return (
    <table className={groups.some((g) => g.agents.some((a) => a.maxBudgetUsd)) ? 'agents budgets' : 'agents'} aria-label="Agents">
      <colgroup>{columns.map((c) => <col key={c.id} className={`col-${c.id}`} style={colStyle(c.id)}/>)}</colgroup>
      <thead>
        <tr>
          {columns.map((c) => {
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
            <th colSpan={columns.length} scope="rowgroup">
              <button type="button" className="group-toggle" aria-expanded={!collapsed?.has(group)}
                onClick={() => onToggle?.(group)}>
                <span aria-hidden="true">{collapsed?.has(group) ? '▸' : '▾'}</span> {GROUP_LABELS[group]}
                <span className="count">{agents.length}</span>
              </button>
            </th>
          </tr>
          {!collapsed?.has(group) && agents.map((a: Agent) => (
            <AgentRow key={a.id} agent={a} now={now} selected={a.id === selectedId} cursor={a.id === cursorId}
              onSelect={onSelect} cols={cols} seenRuns={runs?.[a.id]}/>
          ))}
        </tbody>
      ))}
    </table>
  )
}
