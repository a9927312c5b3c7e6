import {useEffect, useLayoutEffect, useRef, useState, type ReactNode} from 'react'

export interface MenuItem {
  label: string
  onSelect: () => void
  title?: string
  danger?: boolean
  disabled?: boolean
}

interface Props {
  label: string
  items: MenuItem[]
  children?: ReactNode
  /** The button's place in the Tab order (-1: reached by other keys, as in the agents list). */
  tabIndex?: number
}

/**
 * A "⋯" button and its menu (WAI-ARIA menu button). The menu is fixed to the
 * window, so a scrolling list never clips it. It opens on its first item;
 * ↑ ↓ Home End move; Esc, Tab, a click elsewhere or a choice closes it, and
 * the focus goes back to the button (a choice that opens a dialog: the
 * dialog gives it back there).
 */
export function Menu({label, items, children = '⋯', tabIndex}: Props) {
  const [open, setOpen] = useState(false)
  const [pos, setPos] = useState<{top: number; right: number} | null>(null)
  const button = useRef<HTMLButtonElement>(null)
  const menu = useRef<HTMLDivElement>(null)

  useLayoutEffect(() => {
    if (!open || !button.current) return
    const r = button.current.getBoundingClientRect()
    const h = menu.current?.offsetHeight ?? 0
    const below = r.bottom + 2
    const top = below + h > window.innerHeight - 4 ? Math.max(4, r.top - h - 2) : below
    setPos({top, right: Math.max(4, window.innerWidth - r.right)})
  }, [open])

  useEffect(() => {
    if (!open) return
    const onDown = (e: MouseEvent) => {
      const t = e.target as Node
      if (!menu.current?.contains(t) && !button.current?.contains(t)) setOpen(false)
    }
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.stopPropagation()
        setOpen(false)
        button.current?.focus()
      }
    }
    document.addEventListener('mousedown', onDown)
    window.addEventListener('keydown', onKey, true)
    return () => {
      document.removeEventListener('mousedown', onDown)
      window.removeEventListener('keydown', onKey, true)
    }
  }, [open])

  // The first item takes the focus once the menu is placed (hidden until then, it could not).
  useEffect(() => {
    if (open && pos && !menu.current?.contains(document.activeElement)) {
      menu.current?.querySelector<HTMLElement>('[role="menuitem"]:not(:disabled)')?.focus()
    }
  }, [open, pos])

  const onMenuKey = (e: React.KeyboardEvent) => {
    if (e.key === 'Tab') {
      // Tab leaves from the button, as if the menu had not opened.
      setOpen(false)
      button.current?.focus()
      return
    }
    const all = Array.from(menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]:not(:disabled)') ?? [])
    const i = all.indexOf(document.activeElement as HTMLElement)
    const to = {ArrowDown: (i + 1) % all.length, ArrowUp: (i + all.length - 1) % all.length, Home: 0, End: all.length - 1}[e.key]
    e.stopPropagation() // not the list's keys
    if (to === undefined) return
    e.preventDefault()
    all[to]?.focus()
  }

  return (
    <span className="menu-wrap" onClick={(e) => e.stopPropagation()}>
      <button ref={button} type="button" className="menu-button" aria-label={label} title={label}
        aria-haspopup="menu" aria-expanded={open} tabIndex={tabIndex} onClick={() => setOpen(!open)}>{children}</button>
      {open && (
        <div ref={menu} role="menu" aria-label={label} className="menu" onKeyDown={onMenuKey}
          style={pos ? {top: pos.top, right: pos.right} : {visibility: 'hidden'}}>
          {items.map((it) => (
            <button key={it.label} type="button" role="menuitem" title={it.title} disabled={it.disabled}
              className={it.danger ? 'danger' : undefined}
              tabIndex={-1}
              onClick={() => {
                setOpen(false)
                button.current?.focus()
                it.onSelect()
              }}>{it.label}</button>
          ))}
        </div>
      )}
    </span>
  )
}
