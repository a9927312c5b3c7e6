import {afterEach, describe, expect, it, vi} from 'vitest'
import {clock, exact} from './time'

/** Counts the instances of Intl[name] made until the test ends. */
function counted(name: 'DateTimeFormat'): {n: number} {
  const orig = Intl[name]
  const made = {n: 0}
  // @ts-expect-error: a counting stand-in for the constructor
  Intl[name] = class extends orig {
    constructor(...args: never[]) {
      super(...args)
      made.n++
    }
  }
  restore.push(() => {
    Intl[name] = orig as never
  })
  return made
}
const restore: (() => void)[] = []

describe('local time formats', () => {
  afterEach(() => {
    restore.splice(0).forEach((r) => r())
    vi.restoreAllMocks()
  })

  it('build one ICU formatter per format, kept, not one per call (each is native memory the web view churns)', () => {
    const t = '2026-05-01T12:34:56Z'
    const want = [
      new Date(t).toLocaleString(undefined, {month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit'}),
      new Date(t).toLocaleString(undefined, {year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit'}),
    ]
    const made = counted('DateTimeFormat')
    const toLocale = vi.spyOn(Date.prototype, 'toLocaleString')
    for (let i = 0; i < 1000; i++) {
      expect([clock(t), exact(t)]).toEqual(want)
    }
    expect(toLocale).not.toHaveBeenCalled()
    expect(made.n).toBeLessThanOrEqual(2)
  })
})
