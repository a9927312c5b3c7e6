import {useEffect, useRef, useSyncExternalStore, type ReactNode} from 'react'

/** The dialogs' backdrop is above everything else (the feed is at 20, menus at 30). */
export const OVERLAY_Z = 40

// How many dialogs are open: toasts stay below them while any is.
let openDialogs = 0
const listeners = new Set<() => void>()
const changed = (d: number) => {
  openDialogs += d
  listeners.forEach((l) => l())
}

/** Whether a dialog is open now (re-renders when that changes). */
export function useDialogOpen(): boolean {
  return useSyncExternalStore((l) => {
    listeners.add(l)
    return () => listeners.delete(l)
  }, () => openDialogs > 0)
}

interface Props {
  title: string
  onClose: () => void
  children: ReactNode
  wide?: boolean
}

/** A modal dialog: Esc or a click outside closes it; focus moves inside. */
export function Dialog({title, onClose, children, wide}: Props) {
  const ref = useRef<HTMLDivElement>(null)
  useEffect(() => {
    changed(1)
    return () => changed(-1)
  }, [])
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.stopPropagation()
        onClose()
      }
    }
    window.addEventListener('keydown', onKey)
    const first = ref.current?.querySelector<HTMLElement>('input, select, textarea, button')
    first?.focus()
    return () => window.removeEventListener('keydown', onKey)
  }, [onClose])
  return (
    <div className="overlay" style={{zIndex: OVERLAY_Z}} onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div ref={ref} role="dialog" aria-modal="true" aria-label={title} className={wide ? 'dialog wide' : 'dialog'}>
        <header className="dialog-head">
          <h2>{title}</h2>
          <button type="button" className="icon" aria-label="Close" onClick={onClose}>×</button>
        </header>
        {children}
      </div>
    </div>
  )
}

interface ConfirmProps {
  title: string
  message: ReactNode
  confirmLabel: string
  danger?: boolean
  busy?: boolean
  onConfirm: () => void
  onClose: () => void
  children?: ReactNode
}

/** A yes/no question. */
export function Confirm({title, message, confirmLabel, danger, busy, onConfirm, onClose, children}: ConfirmProps) {
  return (
    <Dialog title={title} onClose={onClose}>
      <div className="dialog-body">{message}{children}</div>
      <footer className="dialog-foot">
        <button type="button" onClick={onClose}>Cancel</button>
        <button type="button" className={danger ? 'danger' : 'primary'} disabled={busy} onClick={onConfirm}>
          {confirmLabel}
        </button>
      </footer>
    </Dialog>
  )
}
