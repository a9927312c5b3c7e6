import {useEffect, useId, useLayoutEffect, useMemo, useRef, useState} from 'react'
import type {Agent} from '../../api'
import {useMedia} from '../../components/useMedia'
import {treegridKey} from '../../components/treegrid'
import {spendText} from '../../lib/budget'
import {money} from '../../lib/usage'
import {costOf, GROUP_LABELS, type Group, type GroupRows, type Sort, type SortKey} from '../../lib/groups'
import {AgentRow} from './AgentRow'
import {COLUMNS, columnsFor, shownFor, type ColumnId, type Shown} from './columns'

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

interface Props {
  groups: GroupRows[]
  selectedId: string | null
  cursorId?: string | null
  onSelect: (id: string) => void
  /** The keyboard's focus came to an agent's row (row: to the row itself, not one of its cells). */
  onCursor?: (id: string, row: boolean) => void
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

/**
 * The agents of the selected project, grouped (what needs you first), one
 * line each: a treegrid (WAI-ARIA), whose groups are its parent rows. One
 * row is in the Tab order (the cursor's), with its buttons; the arrow keys
 * move among rows and cells (components/treegrid.ts), Enter opens a row.
 */
export function AgentList({groups, selectedId, cursorId, onSelect, onCursor, sort, onSort, collapsed, onToggle, now: fixedNow, shown, runs}: Props) {
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

  // The row in the Tab order: a group's line the focus was last on, else the cursor's (or the open agent's), else the first.
  const [groupEntry, setGroupEntry] = useState<Group | null>(null)
  const listed = groups.filter((g) => !collapsed?.has(g.group)).flatMap((g) => g.agents.map((a) => a.id))
  const entryGroup = groupEntry && groups.some((g) => g.group === groupEntry) ? groupEntry : null
  const entry = entryGroup ? null : [cursorId, selectedId].find((id) => id && listed.includes(id)) ?? listed[0] ?? null
  const entryRow = entryGroup ?? (entry ? null : groups[0]?.group)

  // A row that moves (to another group, or in a new order) is put back in the DOM, which loses its focus: give it back.
  const grid = useRef<HTMLTableElement>(null)
  const inside = useRef(false)
  useLayoutEffect(() => {
    const active = document.activeElement
    if (inside.current && (!active || active === document.body)) grid.current?.querySelector<HTMLElement>('[role="row"][tabindex="0"]')?.focus()
  })
  const keysId = useId()

  return (
    <>
      <table ref={grid} role="treegrid" aria-label="Agents" aria-describedby={keysId}
        className={groups.some((g) => g.agents.some((a) => a.maxBudgetUsd)) ? 'agents budgets' : 'agents'}
        onKeyDown={(e) => treegridKey(e, e.currentTarget, {
          open: (row) => row.dataset.agent && onSelect(row.dataset.agent),
          toggle: (row, open) => {
            const g = row.dataset.groupRow as Group | undefined
            if (g && open === !!collapsed?.has(g)) onToggle?.(g)
          },
        })}
        onFocus={(e) => {
          inside.current = true
          const row = (e.target as HTMLElement).closest<HTMLElement>('[role="row"]')
          if (row?.dataset.agent) {
            setGroupEntry(null)
            onCursor?.(row.dataset.agent, e.target === row)
          } else if (row?.dataset.groupRow) setGroupEntry(row.dataset.groupRow as Group)
        }}
        onBlur={(e) => {
          // Gone elsewhere (not lost with a row taken out of the page, or with a button that was just disabled:
          // Stop turns into a disabled "Stopping…", and the page drops its focus).
          const to = e.relatedTarget as Node | null
          const lost = !to && (!(e.target as Node).isConnected || (e.target as Element).matches(':disabled'))
          if (!e.currentTarget.contains(to) && !lost) inside.current = false
        }}>
        <colgroup>{columns.map((c) => <col key={c.id} className={`col-${c.id}`} style={colStyle(c.id)}/>)}</colgroup>
        <thead role="rowgroup">
          <tr role="row">
            {columns.map((c) => {
              const active = sort?.key === c.sort && !!c.sort
              return (
                <th key={c.id} role="columnheader" className={`c-${c.id}`} title={c.title}
                  tabIndex={c.sort && onSort ? undefined : -1}
                  aria-sort={active ? (sort!.desc ? 'descending' : 'ascending') : undefined}>
                  {c.sort && onSort
                    ? <button type="button" className="sort" tabIndex={-1} onClick={() => onSort(c.sort!)}>
                        {c.label}{active && <span aria-hidden="true">{sort!.desc ? ' ▾' : ' ▴'}</span>}
                      </button>
                    : c.unseen ? <span className="sr-only">{c.label}</span> : c.label}
                </th>
              )
            })}
          </tr>
        </thead>
        {groups.map(({group, agents}, gi) => {
          const open = !collapsed?.has(group)
          return (
            <tbody key={group} role="rowgroup" data-group={group}>
              <tr role="row" className={`group-row g-${group}`} data-group-row={group} aria-level={1}
                aria-posinset={gi + 1} aria-setsize={groups.length} aria-expanded={open}
                tabIndex={entryRow === group ? 0 : -1} data-focus-home={entryRow === group || undefined}
                onClick={() => onToggle?.(group)}>
                <th role="rowheader" colSpan={columns.length} scope="rowgroup">
                  <span className="group-toggle">
                    <span aria-hidden="true">{open ? '▾' : '▸'}</span> {GROUP_LABELS[group]}
                    <span className="count">{agents.length}</span>
                  </span>
                </th>
              </tr>
              {open && agents.map((a: Agent, i) => (
                <AgentRow key={a.id} agent={a} now={now} selected={a.id === selectedId} cursor={a.id === cursorId}
                  entry={a.id === entry} at={i + 1} of={agents.length}
                  onSelect={onSelect} cols={cols} seenRuns={runs?.[a.id]}/>
              ))}
            </tbody>
          )
        })}
      </table>
      <p id={keysId} className="sr-only">
        Arrow keys move between agents and into a row's cells; Enter opens an agent; s starts or stops it, a acknowledges it.
        Up from the first row reaches the column headers, which sort.
      </p>
    </>
  )
}
