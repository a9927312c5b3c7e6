import {useCallback, useEffect, useId, useRef, useState, useSyncExternalStore, type ReactNode} from 'react'
import {firstUseful, giveFocusBack, tabbables} from './focus'

/** The dialogs' backdrop is above everything else (the feed is at 20, menus at 30). */
export const OVERLAY_Z = 40

// How many dialogs are open: toasts stay below them while any is.
let openDialogs = 0
const listeners = new Set<() => void>()
const changed = (d: number) => {
  openDialogs += d
  listeners.forEach((l) => l())
}

/** Whether a dialog is open now (for keys that must not act behind one). */
export const anyDialogOpen = () => openDialogs > 0

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
  /** The id of what says what the dialog asks (read with its title). */
  describedBy?: string
}

/** The dialog on top (the one the keyboard is in). */
const onTop = (el: HTMLElement | null) => {
  const all = document.querySelectorAll('[role="dialog"][aria-modal="true"]')
  return !!el && all[all.length - 1] === el
}

/**
 * A modal dialog: Esc or a click outside closes it (asking first if its form
 * was edited). The focus starts on its first useful control (see firstUseful;
 * on the dialog itself until a loading form shows one), Tab and Shift+Tab
 * cycle inside it, and closing it gives the focus back to what opened it.
 */
export function Dialog({title, onClose, children, wide, guard = true, describedBy}: Props) {
  const ref = useRef<HTMLDivElement>(null)
  const edited = useRef(false)
  const [asking, setAsking] = useState(false)
  const ask = useRef<HTMLDivElement>(null)
  const keep = useRef<HTMLButtonElement>(null)
  const beforeAsk = useRef<Element | null>(null)
  // What had the focus when it opened (read once, before the dialog takes it).
  const [opener] = useState(() => document.activeElement)
  const askFirst = useCallback(() => {
    if (guard && edited.current) {
      beforeAsk.current = document.activeElement
      setAsking(true)
    } else onClose()
  }, [guard, onClose])
  const keepEditing = useCallback(() => setAsking(false), [])
  useEffect(() => {
    changed(1)
    return () => changed(-1)
  }, [])
  useEffect(() => {
    const box = ref.current
    if (!box) return
    ;(firstUseful(box) ?? box).focus()
    // A form that loads after the dialog opened takes the focus, while the user has not moved it.
    const loaded = new MutationObserver(() => {
      if (document.activeElement === box) firstUseful(box)?.focus()
    })
    loaded.observe(box, {childList: true, subtree: true, attributes: true, attributeFilter: ['disabled']})
    // Focus that lands outside (a toast, a key of the page) comes back in.
    const onFocusIn = (e: FocusEvent) => {
      if (onTop(box) && e.target instanceof Node && !box.contains(e.target)) (firstUseful(box) ?? box).focus()
    }
    document.addEventListener('focusin', onFocusIn)
    return () => {
      loaded.disconnect()
      document.removeEventListener('focusin', onFocusIn)
      giveFocusBack(opener)
    }
  }, [opener])
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!onTop(ref.current)) return
      if (e.key === 'Escape') {
        e.stopPropagation()
        if (asking) keepEditing() // Esc again: keep editing
        else askFirst()
      } else if (e.key === 'Tab') {
        // Tab and Shift+Tab go round inside: the question's two buttons while it asks.
        const scope = asking ? ask.current : ref.current
        const items = tabbables(scope)
        const i = items.indexOf(document.activeElement as HTMLElement)
        e.preventDefault()
        if (!items.length) return
        items[e.shiftKey ? (i <= 0 ? items.length - 1 : i - 1) : (i < 0 || i === items.length - 1 ? 0 : i + 1)].focus()
      }
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [askFirst, asking, keepEditing])
  // Asking, the question has the focus; answered "keep editing", the focus goes back where it was.
  const asked = useRef(false)
  useEffect(() => {
    if (asking) keep.current?.focus()
    else if (asked.current && ref.current) {
      const back = beforeAsk.current
      if (back instanceof HTMLElement && back.isConnected && ref.current.contains(back)) back.focus()
      else (firstUseful(ref.current) ?? ref.current).focus()
    }
    asked.current = asking
  }, [asking])
  return (
    <div className="overlay" style={{zIndex: OVERLAY_Z}} onMouseDown={(e) => e.target === e.currentTarget && askFirst()}>
      <div ref={ref} role="dialog" aria-modal="true" aria-label={title} aria-describedby={describedBy}
        tabIndex={-1} className={wide ? 'dialog wide' : 'dialog'}
        onInput={(e) => {
          if ((e.target as Element).closest?.('form')) edited.current = true
        }}>
        <header className="dialog-head">
          <h2>{title}</h2>
          <button type="button" className="icon" aria-label="Close" onClick={askFirst}>×</button>
        </header>
        {children}
        {asking && (
          <div ref={ask} className="discard-ask" role="alertdialog" aria-label="Discard your changes?">
            <span><strong>Discard your changes?</strong> What you typed here is not saved.</span>
            <button ref={keep} type="button" onClick={keepEditing}>Keep editing</button>
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

/** A yes/no question; what it asks is the dialog's description. */
export function Confirm({title, message, confirmLabel, danger, busy, onConfirm, onClose, children}: ConfirmProps) {
  const id = useId()
  // It starts on its answer; on Cancel when that answer destroys something.
  return (
    <Dialog title={title} onClose={onClose} describedBy={id}>
      <div className="dialog-body"><div id={id} className="question">{message}</div>{children}</div>
      <footer className="dialog-foot">
        <button type="button" onClick={onClose} data-autofocus={danger || undefined}>Cancel</button>
        <button type="button" className={danger ? 'danger' : 'primary'} disabled={busy} onClick={onConfirm}
          data-autofocus={!danger || undefined}>
          {confirmLabel}
        </button>
      </footer>
    </Dialog>
  )
}
