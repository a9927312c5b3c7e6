// The keys of a treegrid (WAI-ARIA APG's treegrid pattern): rows and cells
// both take the focus. A row with aria-expanded is a parent (a group of the
// agents list); the header row's cells are its sort buttons.
//
//   ↑ ↓            the row (or the cell) above or below; ↑ from the first row reaches the column headers
//   → ←            a parent row opens or closes; a row goes into its cells and back; cell to cell
//   Home End       the first or last row (in a cell: the first or last cell of its row)
//   Ctrl+Home/End  the first or last row, in the same column
//   PgUp PgDn      ten rows up or down
//   Enter          opens the row (a parent row opens or closes); on a button, the button
//   Space          a parent row opens or closes

const WIDGETS = 'button, a[href], input, select, textarea'
const PAGE = 10

/** The places of a row the focus stops at, left to right: each cell, or the buttons a cell holds. */
export function cellStops(row: HTMLElement): HTMLElement[] {
  if (row.hasAttribute('aria-expanded')) return [] // a group's line: the row is all there is
  const stops: HTMLElement[] = []
  for (const cell of Array.from(row.children) as HTMLElement[]) {
    if (!cell.matches('[role="gridcell"], [role="rowheader"], [role="columnheader"]')) continue
    const widgets = Array.from(cell.querySelectorAll<HTMLElement>(WIDGETS))
      .filter((w) => !(w as HTMLButtonElement).disabled && !w.closest('[role="menu"]'))
    stops.push(...(widgets.length ? widgets : [cell]))
  }
  return stops
}

export interface TreegridActions {
  /** Enter on a row, or on a cell that holds no button. */
  open: (row: HTMLElement) => void
  /** → on a closed parent row, ← on an open one, Enter or Space on either. */
  toggle: (row: HTMLElement, open: boolean) => void
}

/** Handles a key pressed in the grid; a key it uses is not passed on (preventDefault). */
export function treegridKey(e: React.KeyboardEvent, grid: HTMLElement, act: TreegridActions) {
  if (e.altKey || e.metaKey || e.shiftKey || e.defaultPrevented) return
  const target = e.target as HTMLElement
  if (target.closest('[role="menu"]')) return // a row's open menu has its own keys
  const row = target.closest<HTMLElement>('[role="row"]')
  if (!row || !grid.contains(row)) return
  if (e.ctrlKey && e.key !== 'Home' && e.key !== 'End') return
  const rows = Array.from(grid.querySelectorAll<HTMLElement>('[role="row"]'))
  const head = rows.find((r) => r.closest('thead'))
  const body = rows.filter((r) => r !== head)
  const inHead = row === head
  const stops = cellStops(row)
  // 0: the row itself; n: its nth stop.
  const col = target === row ? 0 : stops.findIndex((s) => s === target || s.contains(target)) + 1
  const parent = row.hasAttribute('aria-expanded')
  const open = row.getAttribute('aria-expanded') === 'true'
  const i = body.indexOf(row)
  /** The same column in another row (the row itself for a group's line, or from the row). */
  const at = (r: HTMLElement | undefined, c: number): HTMLElement | undefined => {
    if (!r) return undefined
    const s = cellStops(r)
    if (r === head) return s[Math.max(1, Math.min(c, s.length)) - 1]
    return c === 0 || !s.length ? r : s[Math.min(c, s.length) - 1]
  }
  const go = (el: HTMLElement | undefined) => {
    e.preventDefault()
    el?.focus()
  }
  switch (e.key) {
    case 'ArrowDown':
      return go(inHead ? at(body[0], col) : at(body[i + 1], col))
    case 'ArrowUp':
      return go(inHead ? undefined : i > 0 ? at(body[i - 1], col) : at(head, col))
    case 'PageDown':
      return go(inHead ? at(body[Math.min(PAGE - 1, body.length - 1)], col) : at(body[Math.min(i + PAGE, body.length - 1)], col))
    case 'PageUp':
      return go(inHead ? undefined : at(body[Math.max(0, i - PAGE)], col))
    case 'ArrowRight':
      if (col === 0 && parent) {
        e.preventDefault()
        if (!open) act.toggle(row, true)
        return
      }
      return go(stops[Math.min(col, stops.length - 1)])
    case 'ArrowLeft':
      if (col === 0) {
        e.preventDefault()
        if (parent && open) act.toggle(row, false)
        return
      }
      return go(col === 1 ? (inHead ? undefined : row) : stops[col - 2])
    case 'Home':
    case 'End': {
      const first = e.key === 'Home'
      if (col > 0 && !e.ctrlKey) return go(stops[first ? 0 : stops.length - 1])
      return go(at(first ? body[0] : body[body.length - 1], col))
    }
    case 'Enter':
      if (target.matches(WIDGETS) || inHead) return // the button's own Enter
      e.preventDefault()
      if (parent) act.toggle(row, !open)
      else act.open(row)
      return
    case ' ':
      if (col === 0 && parent) {
        e.preventDefault()
        act.toggle(row, !open)
      }
  }
}
