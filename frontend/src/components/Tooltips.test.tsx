import {act, fireEvent, render, screen} from '@testing-library/react'
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'
import {placeTip, TIP_DELAY, Tooltips} from './Tooltips'

function Rows({order, menu = false, dialog = false}: {order: string[]; menu?: boolean; dialog?: boolean}) {
  return (
    <>
      <table><tbody>
        {order.map((id) => (
          <tr key={id} data-tip-head={id}><td data-cell={id} title={`runs of ${id}`}>{id}</td></tr>
        ))}
      </tbody></table>
      {menu && <div role="menu"><button role="menuitem" title="Pause it">Pause</button></div>}
      {dialog && <div role="dialog" aria-modal="true"><button title="Create it and start it now">Create and start</button></div>}
      <Tooltips/>
    </>
  )
}

const cell = (id: string) => document.querySelector<HTMLElement>(`[data-cell="${id}"]`)!
const hover = (el: Element) => fireEvent.pointerOver(el, {clientX: 10, clientY: 10})
const rest = () => act(() => { vi.advanceTimersByTime(TIP_DELAY + 50) })
const frame = () => act(() => { vi.advanceTimersByTime(20) })

describe('tooltips', () => {
  beforeEach(() => vi.useFakeTimers())
  afterEach(() => {
    vi.useRealTimers()
    Reflect.deleteProperty(document, 'elementFromPoint')
  })

  it('shows the title after a rest, headed by its row, and none of the browser’s own meanwhile', () => {
    render(<Rows order={['alpha', 'beta']}/>)
    hover(cell('alpha'))
    expect(cell('alpha')).not.toHaveAttribute('title') // the browser has nothing to show
    expect(screen.queryByRole('tooltip')).toBeNull()
    rest()
    expect(screen.getByRole('tooltip')).toHaveTextContent('alpharuns of alpha')
    expect(screen.getByRole('tooltip')).toHaveAttribute('data-tip-for', 'alpha')
    // A press takes it away, and the title is back.
    fireEvent.pointerDown(cell('alpha'))
    expect(screen.queryByRole('tooltip')).toBeNull()
    expect(cell('alpha')).toHaveAttribute('title', 'runs of alpha')
  })

  it('leaves with its target: removed (a dialog closed) or another row under the pointer after a re-sort', () => {
    const {rerender} = render(<Rows order={['alpha', 'beta']} dialog/>)
    const create = screen.getByRole('button', {name: 'Create and start'})
    hover(create)
    rest()
    expect(screen.getByRole('tooltip')).toHaveTextContent('Create it and start it now')
    rerender(<Rows order={['alpha', 'beta']}/>) // the dialog closed under a still pointer
    frame()
    expect(screen.queryByRole('tooltip')).toBeNull()

    hover(cell('alpha'))
    rest()
    expect(screen.getByRole('tooltip')).toHaveTextContent('runs of alpha')
    // Re-sorted: beta's row is now where the pointer rests.
    rerender(<Rows order={['beta', 'alpha']}/>)
    Object.defineProperty(document, 'elementFromPoint', {configurable: true, value: () => cell('beta')})
    frame()
    expect(screen.queryByRole('tooltip')).toBeNull()
    expect(cell('alpha')).toHaveAttribute('title', 'runs of alpha')
  })

  it('never shows over an open menu, nor from under an open dialog; a menu item’s own shows', () => {
    const {rerender} = render(<Rows order={['alpha']} menu/>)
    hover(cell('alpha'))
    rest()
    expect(screen.queryByRole('tooltip')).toBeNull()
    hover(screen.getByRole('menuitem', {name: 'Pause'}))
    rest()
    expect(screen.getByRole('tooltip')).toHaveTextContent('Pause it')
    rerender(<Rows order={['alpha']} dialog/>)
    hover(cell('alpha'))
    rest()
    expect(screen.queryByRole('tooltip')).toBeNull()
  })

  it('is placed where it covers no control when it can', () => {
    const view = {width: 1024, height: 700}
    const target = new DOMRect(100, 100, 80, 20)
    const tip = {width: 200, height: 40}
    // Nothing in the way: below the pointer.
    expect(placeTip(tip, target, {x: 110, y: 110}, [], view).top).toBeGreaterThanOrEqual(120)
    // A menu's items below: above instead.
    const below = [new DOMRect(90, 125, 150, 30)]
    const at = placeTip(tip, target, {x: 110, y: 110}, below, view)
    expect(at.top + tip.height).toBeLessThanOrEqual(100)
    // Always inside the window.
    const edge = placeTip(tip, new DOMRect(1000, 680, 20, 20), {x: 1010, y: 690}, [], view)
    expect(edge.left + tip.width).toBeLessThanOrEqual(1024)
    expect(edge.top + tip.height).toBeLessThanOrEqual(700)
  })
})
