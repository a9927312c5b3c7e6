import {LIVE, type Agent} from '../../api'
import {costOf, type SortKey} from '../../lib/groups'

// The agents list's columns: which there are and which are shown. (Its own
// module: the list and its rows both read it.)

export type ColumnId = 'agent' | 'status' | 'activity' | 'runtime' | 'when' | 'runs' | 'cost' | 'cpu' | 'mem' | 'actions'

export interface Column {
  id: ColumnId
  label: string
  sort?: SortKey
  title?: string
  /** Its header is read, not shown. */
  unseen?: boolean
}

export const COLUMNS: Column[] = [
  {id: 'agent', label: 'Agent', sort: 'name', title: 'Name and id'},
  {id: 'status', label: 'Status', sort: 'status'},
  {id: 'activity', label: 'Activity', sort: 'activity', title: 'What it is doing: busy with a tool, or silent for how long'},
  {id: 'runtime', label: 'Run time', sort: 'runtime'},
  {id: 'when', label: 'Last run', sort: 'started', title: 'When the current run started, or when the last one ended (exact times on hover)'},
  {id: 'runs', label: 'Runs', sort: 'runs', title: 'Runs, and auto-resumes (↻) since the last start by hand'},
  {id: 'cost', label: 'Cost', sort: 'cost', title: 'What the agent’s runs cost, as it reported (all runs)'},
  {id: 'cpu', label: 'CPU', sort: 'cpu', title: 'CPU of a running agent and everything it started (100% = one core), sampled every 2 s'},
  {id: 'mem', label: 'Mem', sort: 'mem', title: 'Memory (resident) of a running agent and everything it started'},
  {id: 'actions', label: 'Actions', unseen: true},
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
