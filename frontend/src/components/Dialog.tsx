import {useCallback, useEffect, useRef, useState, useSyncExternalStore, type ReactNode} from 'react'

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
  /**
   * Ask before an edit is thrown away: once something was typed or ticked in
   * the dialog's form, Esc, a click outside and × ask "Discard your
   * changes?" first (its own Cancel button, an explicit choice, does not).
   * On by default; a dialog with nothing to lose can turn it off.
   */
  guard?: boolean
}

/** A modal dialog: Esc or a click outside closes it (asking first if its form was edited); focus moves inside. */
export function Dialog({title, onClose, children, wide, guard = true}: Props) {
  const ref = useRef<HTMLDivElement>(null)
  const edited = useRef(false)
  const [asking, setAsking] = useState(false)
  const keep = useRef<HTMLButtonElement>(null)
  const askFirst = useCallback(() => {
    if (guard && edited.current) setAsking(true)
    else onClose()
  }, [guard, onClose])
  useEffect(() => {
    changed(1)
    return () => changed(-1)
  }, [])
  useEffect(() => {
    const first = ref.current?.querySelector<HTMLElement>('input, select, textarea, button')
    first?.focus()
  }, [])
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.stopPropagation()
        if (asking) setAsking(false) // Esc again: keep editing
        else askFirst()
      }
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [askFirst, asking])
  useEffect(() => {
    if (asking) keep.current?.focus()
  }, [asking])
  return (
    <div className="overlay" style={{zIndex: OVERLAY_Z}} onMouseDown={(e) => e.target === e.currentTarget && askFirst()}>
      <div ref={ref} role="dialog" aria-modal="true" aria-label={title} className={wide ? 'dialog wide' : 'dialog'}
        onInput={(e) => {
          if ((e.target as Element).closest?.('form')) edited.current = true
        }}>
        <header className="dialog-head">
          <h2>{title}</h2>
          <button type="button" className="icon" aria-label="Close" onClick={askFirst}>×</button>
        </header>
        {children}
        {asking && (
          <div className="discard-ask" role="alertdialog" aria-label="Discard your changes?">
            <span><strong>Discard your changes?</strong> What you typed here is not saved.</span>
            <button ref={keep} type="button" onClick={() => setAsking(false)}>Keep editing</button>
            <button type="button" className="danger" onClick={onClose}>Discard</button>
          </div>
        )}
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
