import {useEffect, useLayoutEffect, useRef, useState} from 'react'
import {createPortal} from 'react-dom'

/**
 * The window's tooltips. Components keep writing `title` (which screen
 * readers and tests read); this layer shows it instead of the browser, whose
 * native tooltip stays on screen after its element is gone (a dialog closed,
 * a row re-sorted under a still pointer: WebKitGTK then shows another row's
 * words) and sits over whatever opened below it. Here a tooltip:
 * - leaves with its target: when the pointer leaves it, a button is pressed,
 *   a key typed, the page scrolls, or the target is removed, moved or
 *   replaced under the pointer (checked on every frame while one is shown);
 * - never covers a menu or a control: it is not shown over an open menu
 *   (only its items' own, beside the menu) or behind an open dialog, and it
 *   is placed where it covers no button, field or menu item when it can;
 * - in a row of the list, is headed by that row's agent (`data-tip-head`).
 * While its target is hovered the `title` moves to `data-tip` (so the
 * browser shows nothing of its own) and comes back when the tip goes.
 */

/** How long the pointer rests on something before its tooltip shows. */
export const TIP_DELAY = 550

interface Tip {
  el: HTMLElement
  text: string
  head?: string
  /** The pointer when the tip was asked for. */
  x: number
  y: number
}

const CONTROLS = 'button, input, select, textarea, a[href], [role="menuitem"], [role="tab"], [role="menu"], [contenteditable="true"]'

/** Moves el's title aside while it is hovered. */
function hijack(el: HTMLElement) {
  const t = el.getAttribute('title')
  if (t === null) return
  el.dataset.tip = t
  el.removeAttribute('title')
  // An element named only by its title keeps its name meanwhile.
  if (!el.getAttribute('aria-label') && !el.textContent?.trim()) {
    el.setAttribute('aria-label', t)
    el.dataset.tipLabel = ''
  }
}

/** Gives el its title back, unless React has set a new one meanwhile. */
function restore(el: HTMLElement) {
  const t = el.dataset.tip
  if (t === undefined) return
  delete el.dataset.tip
  if (el.dataset.tipLabel !== undefined) {
    delete el.dataset.tipLabel
    el.removeAttribute('aria-label')
  }
  if (!el.hasAttribute('title')) el.setAttribute('title', t)
}

/** The element whose tooltip the pointer asks for: the nearest with words to show. */
function tipTarget(node: EventTarget | null): HTMLElement | null {
  const el = node instanceof Element ? node.closest<HTMLElement>('[title], [data-tip]') : null
  if (!el || !(el.getAttribute('title') ?? el.dataset.tip)?.trim()) return null
  return el
}

/** Whether el may show its tip now: not from under an open dialog, not over an open menu. */
function allowed(el: HTMLElement): boolean {
  const dialogs = document.querySelectorAll('[role="dialog"][aria-modal="true"]')
  const top = dialogs[dialogs.length - 1]
  if (top && !top.contains(el)) return false
  const menu = document.querySelector('[role="menu"]')
  if (menu && !menu.contains(el)) return false
  return el.getAttribute('aria-expanded') !== 'true'
}

function rectsOverlap(a: DOMRect, b: {left: number; top: number; right: number; bottom: number}): number {
  const w = Math.min(a.right, b.right) - Math.max(a.left, b.left)
  const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top)
  return w > 0 && h > 0 ? w * h : 0
}

/** Where the tip goes: the first place that covers no control (else the one that covers least), in the window. */
export function placeTip(tip: {width: number; height: number}, target: DOMRect, pointer: {x: number; y: number},
  controls: DOMRect[], view: {width: number; height: number}, beside = false): {left: number; top: number} {
  const gap = 6
  const clampX = (x: number) => Math.max(4, Math.min(x, view.width - tip.width - 4))
  const clampY = (y: number) => Math.max(4, Math.min(y, view.height - tip.height - 4))
  const x = clampX(pointer.x - 8)
  const candidates = beside
    ? [{left: target.right + gap, top: clampY(target.top)}, {left: target.left - tip.width - gap, top: clampY(target.top)}]
    : [
        {left: x, top: Math.max(target.bottom, pointer.y + 14) + gap - 6}, // below, as a browser's
        {left: x, top: target.top - tip.height - gap}, // above
        {left: target.right + gap, top: clampY(target.top)}, // beside
        {left: target.left - tip.width - gap, top: clampY(target.top)},
      ]
  let best = candidates[0]
  let bestCost = Infinity
  for (const c of candidates) {
    const box = {left: c.left, top: c.top, right: c.left + tip.width, bottom: c.top + tip.height}
    const off = box.left < 0 || box.top < 0 || box.right > view.width || box.bottom > view.height
    const fixed = {left: clampX(c.left), top: clampY(c.top)}
    const fbox = {left: fixed.left, top: fixed.top, right: fixed.left + tip.width, bottom: fixed.top + tip.height}
    const cost = controls.reduce((sum, r) => sum + rectsOverlap(r, fbox), 0) + rectsOverlap(target, fbox) * 2 + (off ? 1 : 0)
    if (cost < bestCost) {
      best = fixed
      bestCost = cost
    }
    if (cost === 0) break
  }
  return best
}

export function Tooltips() {
  const [tip, setTip] = useState<Tip | null>(null)
  const box = useRef<HTMLDivElement>(null)
  const shown = useRef<Tip | null>(null)
  shown.current = tip

  useEffect(() => {
    let hovered: HTMLElement | null = null
    let timer: ReturnType<typeof setTimeout> | undefined
    let frame = 0
    let px = 0
    let py = 0
    const hide = () => {
      clearTimeout(timer)
      cancelAnimationFrame(frame)
      if (hovered) restore(hovered)
      hovered = null
      setTip(null)
    }
    // While a tip is asked for or shown: is its target still there, under the pointer, with the same words?
    const watch = () => {
      frame = requestAnimationFrame(() => {
        const el = hovered
        if (!el) return
        if (!el.isConnected) return hide()
        const under = typeof document.elementFromPoint === 'function' ? document.elementFromPoint(px, py) : el
        if (under && !el.contains(under)) return hide()
        if (el.hasAttribute('title')) hijack(el) // React wrote new words
        const cur = shown.current
        if (cur && cur.el === el && cur.text !== el.dataset.tip) setTip({...cur, text: el.dataset.tip ?? ''})
        watch()
      })
    }
    const over = (e: PointerEvent) => {
      px = e.clientX
      py = e.clientY
      const el = tipTarget(e.target)
      if (el === hovered) return
      hide()
      if (!el || e.buttons) return
      hovered = el
      hijack(el)
      timer = setTimeout(() => {
        if (hovered !== el || !el.isConnected || !allowed(el)) return
        const head = el.closest<HTMLElement>('[data-tip-head]')?.dataset.tipHead
        setTip({el, text: el.dataset.tip ?? '', head, x: px, y: py})
      }, TIP_DELAY)
      watch()
    }
    const move = (e: PointerEvent) => {
      px = e.clientX
      py = e.clientY
    }
    const out = (e: PointerEvent) => {
      if (hovered && !(e.relatedTarget instanceof Node && hovered.contains(e.relatedTarget))) hide()
    }
    // A scroll moves the target from under its tip (the log view following its output scrolls elsewhere: not that).
    const scrolled = (e: Event) => {
      if (hovered && (e.target === document || (e.target instanceof Node && e.target.contains(hovered)))) hide()
    }
    const opts = {capture: true, passive: true}
    document.addEventListener('pointerover', over, opts)
    document.addEventListener('pointermove', move, opts)
    document.addEventListener('pointerout', out, opts)
    document.addEventListener('pointerdown', hide, opts)
    document.addEventListener('keydown', hide, opts)
    document.addEventListener('wheel', hide, opts)
    document.addEventListener('scroll', scrolled, opts)
    window.addEventListener('blur', hide)
    return () => {
      hide()
      document.removeEventListener('pointerover', over, opts)
      document.removeEventListener('pointermove', move, opts)
      document.removeEventListener('pointerout', out, opts)
      document.removeEventListener('pointerdown', hide, opts)
      document.removeEventListener('keydown', hide, opts)
      document.removeEventListener('wheel', hide, opts)
      document.removeEventListener('scroll', scrolled, opts)
      window.removeEventListener('blur', hide)
    }
  }, [])

  useLayoutEffect(() => {
    const b = box.current
    if (!tip || !b) return
    const target = tip.el.getBoundingClientRect()
    const inMenu = !!tip.el.closest('[role="menu"]')
    const anchor = inMenu ? tip.el.closest('[role="menu"]')!.getBoundingClientRect() : target
    const controls = Array.from(document.querySelectorAll<HTMLElement>(CONTROLS))
      .filter((c) => c !== tip.el && !c.contains(tip.el) && !tip.el.contains(c))
      .map((c) => c.getBoundingClientRect())
      .filter((r) => r.width > 0 && r.height > 0)
    const at = placeTip({width: b.offsetWidth, height: b.offsetHeight}, anchor, {x: tip.x, y: tip.y}, controls,
      {width: window.innerWidth, height: window.innerHeight}, inMenu)
    b.style.left = `${at.left}px`
    b.style.top = `${at.top}px`
    b.style.visibility = 'visible'
  }, [tip])

  if (!tip) return null
  const head = tip.head && !tip.text.startsWith(tip.head) ? tip.head : undefined
  return createPortal(
    <div ref={box} role="tooltip" className="tip" data-tip-for={tip.head} style={{left: 0, top: 0, visibility: 'hidden'}}>
      {head && <strong className="tip-head">{head}</strong>}
      {tip.text}
    </div>,
    document.body,
  )
}
