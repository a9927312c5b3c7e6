// Where the keyboard focus goes: the elements Tab reaches in a part of the
// page, the first useful one of a dialog, and where focus returns when what
// had it is gone.

const FOCUSABLE = 'a[href], button, input, select, textarea, summary, [tabindex]'

/** Whether el is shown (jsdom has no layout: there, everything is). */
const shown = (el: HTMLElement) => (typeof el.checkVisibility === 'function' ? el.checkVisibility() : true)

const enabled = (el: HTMLElement) =>
  !(el as HTMLButtonElement).disabled && !el.closest('[inert], fieldset:disabled') &&
  !(el instanceof HTMLInputElement && el.type === 'hidden')

/** What Tab reaches inside root, in order (positive tabindex is not used in this app). */
export function tabbables(root: HTMLElement | null): HTMLElement[] {
  if (!root) return []
  return Array.from(root.querySelectorAll<HTMLElement>(FOCUSABLE)).filter((el) => {
    if (el.tabIndex < 0 || !enabled(el) || !shown(el)) return false
    // Of a group of radio buttons, Tab reaches the checked one (or the first when none is).
    if (el instanceof HTMLInputElement && el.type === 'radio' && el.name) {
      const group = Array.from(root.querySelectorAll<HTMLInputElement>(`input[type="radio"][name="${CSS.escape(el.name)}"]`))
      const checked = group.find((r) => r.checked)
      return checked ? el === checked : el === group[0]
    }
    return true
  })
}

/**
 * The control a dialog starts on: the one it names (data-autofocus), else
 * its first field (the checked radio button of a group), else its footer's
 * primary button; null while none is there (a form still loading).
 */
export function firstUseful(dialog: HTMLElement): HTMLElement | null {
  const named = dialog.querySelector<HTMLElement>('[data-autofocus]')
  if (named && enabled(named) && shown(named)) return named
  const field = tabbables(dialog).find((el) => el.matches('input, select, textarea') && !el.closest('.dialog-head'))
  if (field) return field
  const primary = dialog.querySelector<HTMLElement>('.dialog-foot .primary')
  return primary && enabled(primary) && shown(primary) ? primary : null
}

/**
 * Gives the focus back to el (what opened a dialog or a panel); when el is
 * gone or disabled, to the list's current row (data-focus-home) instead.
 * Nothing moves when something else has taken the focus meanwhile.
 */
export function giveFocusBack(el: Element | null) {
  const active = document.activeElement
  if (active && active !== document.body) return
  const back = el instanceof HTMLElement && el.isConnected && enabled(el) ? el : null
  ;(back ?? document.querySelector<HTMLElement>('[data-focus-home]'))?.focus()
}

/** Moves the focus among items with the arrow keys (and Home and End); true when the key was one of them. */
export function arrowFocus(e: React.KeyboardEvent | KeyboardEvent, items: HTMLElement[], vertical = true): boolean {
  const i = items.indexOf(document.activeElement as HTMLElement)
  const [next, prev] = vertical ? ['ArrowDown', 'ArrowUp'] : ['ArrowRight', 'ArrowLeft']
  let to: number
  if (e.key === next) to = i < 0 ? 0 : Math.min(items.length - 1, i + 1)
  else if (e.key === prev) to = i < 0 ? items.length - 1 : Math.max(0, i - 1)
  else if (e.key === 'Home') to = 0
  else if (e.key === 'End') to = items.length - 1
  else return false
  e.preventDefault()
  items[to]?.focus()
  return true
}
