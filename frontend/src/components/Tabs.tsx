import type {ReactNode} from 'react'
import {arrowFocus} from './focus'

interface Props<T extends string> {
  /** What the tabs choose between (read with the tablist). */
  label: string
  tabs: readonly {id: T; label: ReactNode}[]
  selected: T
  onSelect: (id: T) => void
  /** Names the tabs and their panel: `${idBase}-tab-${id}`, `${idBase}-panel`. */
  idBase: string
  className?: string
}

/**
 * Tabs (WAI-ARIA APG, automatic activation): the selected tab is the one in
 * the Tab order; ← → Home End move to another tab and show it. Its panel
 * takes tabPanel(idBase, selected).
 */
export function Tabs<T extends string>({label, tabs, selected, onSelect, idBase, className}: Props<T>) {
  return (
    <span className={className} role="tablist" aria-label={label}
      onKeyDown={(e) => {
        if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return
        const items = Array.from(e.currentTarget.querySelectorAll<HTMLElement>('[role="tab"]'))
        if (!arrowFocus(e, items, false)) return
        e.stopPropagation()
        const at = items.indexOf(document.activeElement as HTMLElement)
        if (at >= 0) onSelect(tabs[at].id)
      }}>
      {tabs.map((t) => (
        <button key={t.id} id={`${idBase}-tab-${t.id}`} type="button" role="tab" aria-selected={t.id === selected}
          aria-controls={`${idBase}-panel`} tabIndex={t.id === selected ? 0 : -1} onClick={() => onSelect(t.id)}>
          {t.label}
        </button>
      ))}
    </span>
  )
}

/** The attributes of the panel the tabs show. */
export const tabPanel = (idBase: string, selected: string) =>
  ({role: 'tabpanel', id: `${idBase}-panel`, 'aria-labelledby': `${idBase}-tab-${selected}`}) as const
