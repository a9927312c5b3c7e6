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
}

/**
 * A "⋯" button and its menu. The menu is fixed to the window, so a scrolling
 * list never clips it; Esc, a click elsewhere or a choice closes it.
 */
export function Menu({label, items, children = '⋯'}: Props) {
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
    menu.current?.querySelector<HTMLElement>('[role="menuitem"]:not(:disabled)')?.focus()
    return () => {
      document.removeEventListener('mousedown', onDown)
      window.removeEventListener('keydown', onKey, true)
    }
  }, [open])

  const onMenuKey = (e: React.KeyboardEvent) => {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return
    e.preventDefault()
    e.stopPropagation()
    const all = Array.from(menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]:not(:disabled)') ?? [])
    const i = all.indexOf(document.activeElement as HTMLElement)
    all[(i + (e.key === 'ArrowDown' ? 1 : all.length - 1)) % all.length]?.focus()
  }

  return (
    <span className="menu-wrap" onClick={(e) => e.stopPropagation()}>
      <button ref={button} type="button" className="menu-button" aria-label={label} title={label}
        aria-haspopup="menu" aria-expanded={open} onClick={() => setOpen(!open)}>{children}</button>
      {open && (
        <div ref={menu} role="menu" aria-label={label} className="menu" onKeyDown={onMenuKey}
          style={pos ? {top: pos.top, right: pos.right} : {visibility: 'hidden'}}>
          {items.map((it) => (
            <button key={it.label} type="button" role="menuitem" title={it.title} disabled={it.disabled}
              className={it.danger ? 'danger' : undefined}
              onClick={() => {
                setOpen(false)
                it.onSelect()
              }}>{it.label}</button>
          ))}
        </div>
      )}
    </span>
  )
}
