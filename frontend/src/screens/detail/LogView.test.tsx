import {act, fireEvent, render, screen} from '@testing-library/react'
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'
import {LogView, ROW_HEIGHT} from './LogView'

const lines = (n: number, from = 0) => Array.from({length: n}, (_, i) => `line ${from + i}`)

// jsdom lays nothing out: give the scroll box a height and a scrollTop that sticks.
let scrollTop = 0
beforeEach(() => {
  scrollTop = 0
  Object.defineProperty(HTMLElement.prototype, 'clientHeight', {configurable: true, get: () => 360})
  Object.defineProperty(HTMLElement.prototype, 'scrollTop', {
    configurable: true, get: () => scrollTop, set: (v: number) => { scrollTop = v },
  })
})
afterEach(() => {
  delete (HTMLElement.prototype as {clientHeight?: number}).clientHeight
  delete (HTMLElement.prototype as {scrollTop?: number}).scrollTop
})

const log = () => screen.getByRole('log')
const rendered = () => document.querySelectorAll('.log-line').length

describe('LogView', () => {
  it('keeps only the rows in view in the DOM, even for a million lines', () => {
    render(<LogView lines={lines(1_000_000)}/>)
    fireEvent.scroll(log())
    expect(screen.getByText('1000000 lines')).toBeInTheDocument()
    expect(rendered()).toBeGreaterThan(0)
    expect(rendered()).toBeLessThan(100)
    // It follows: the last line is on screen.
    expect(screen.getByText('line 999999')).toBeInTheDocument()
  })

  it('follows new lines, pauses when scrolled up, and jumps back to the end', () => {
    const {rerender} = render(<LogView lines={lines(1000)}/>)
    expect(screen.getByText(/following/)).toBeInTheDocument()
    expect(scrollTop).toBe(1000 * ROW_HEIGHT)

    rerender(<LogView lines={lines(1010)}/>)
    expect(scrollTop).toBe(1010 * ROW_HEIGHT)
    fireEvent.scroll(log()) // what the browser sends after scrollTop changes
    expect(screen.getByText('line 1009')).toBeInTheDocument()

    // The user scrolls up: following pauses and new lines do not move the view.
    act(() => {
      scrollTop = 100 * ROW_HEIGHT
      fireEvent.scroll(log())
    })
    rerender(<LogView lines={lines(1015)}/>)
    expect(scrollTop).toBe(100 * ROW_HEIGHT)
    expect(screen.getByRole('button', {name: /Paused — 5 new lines · jump to end/})).toBeInTheDocument()
    expect(screen.queryByText('line 1014')).toBeNull()

    fireEvent.click(screen.getByRole('button', {name: /jump to end/}))
    expect(scrollTop).toBe(1015 * ROW_HEIGHT)
    fireEvent.scroll(log())
    expect(screen.getByText('line 1014')).toBeInTheDocument()
    expect(screen.getByText(/following/)).toBeInTheDocument()
  })

  it('scrolling back to the bottom follows again', () => {
    render(<LogView lines={lines(500)}/>)
    act(() => {
      scrollTop = 0
      fireEvent.scroll(log())
    })
    expect(screen.getByRole('button', {name: /jump to end/})).toBeInTheDocument()
    act(() => {
      scrollTop = 500 * ROW_HEIGHT - 360
      fireEvent.scroll(log())
    })
    expect(screen.getByText(/following/)).toBeInTheDocument()
  })

  it('searches: matching lines highlighted, with two lines around each and gaps between', async () => {
    const log = ['a0', 'a1', 'a2', 'ERROR: disk full', 'a4', 'a5', 'a6', 'a7', 'a8', 'error again', 'a10']
    const onMatches = vi.fn()
    render(<LogView lines={log} search="error" current={1} onMatches={onMatches}/>)
    expect(await screen.findByText(/2 matching lines of 11/)).toBeInTheDocument()
    expect(onMatches).toHaveBeenLastCalledWith(2)
    const shown = Array.from(document.querySelectorAll('.log-line')).map((e) => e.textContent)
    expect(shown).toEqual(['a1', 'a2', 'ERROR: disk full', 'a4', 'a5', '⋯', 'a7', 'a8', 'error again', 'a10'])
    expect(screen.queryByText('a0')).toBeNull()
    expect(document.querySelectorAll('mark')).toHaveLength(2)
    expect(document.querySelector('mark.current')).toHaveTextContent('error')
  })

  it('marks where each run begins', () => {
    const run = (n: number) => ({n, startedAt: '2026-05-01T12:00:00Z', cause: n === 1 ? 'started by you' : 'auto-resumed', prevEnd: n === 2 ? 'silent too long; killed' : undefined})
    render(<LogView lines={lines(10)} markers={[{run: run(1), line: 0}, {run: run(2), line: 6}]}/>)
    const rows = Array.from(document.querySelectorAll('.log-row, .log-line')).map((e) => e.textContent)
    expect(rows[0]).toMatch(/^Run 1 · started by you/)
    expect(rows[7]).toMatch(/^Run 2 · auto-resumed.*the run before: silent too long; killed/)
    expect(rows[8]).toBe('line 6')
  })
})
