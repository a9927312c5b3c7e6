import {act, renderHook, waitFor} from '@testing-library/react'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api, type EventName} from '../../api'
import {appendCapped, MAX_LINES, useLogLines} from './useLogLines'

const handlers = new Map<string, (data: unknown) => void>()

vi.mock('../../api', async (orig) => {
  const real = await orig<typeof import('../../api')>()
  return {
    ...real,
    api: {logs: {tail: vi.fn(), follow: vi.fn(() => Promise.resolve()), unfollow: vi.fn(() => Promise.resolve())}},
    onEvent: (name: EventName, h: (d: unknown) => void) => {
      handlers.set(name, h)
      return () => handlers.delete(name)
    },
  }
})

const lines = (n: number, from = 0) => Array.from({length: n}, (_, i) => `line ${from + i}`)

describe('appendCapped', () => {
  it('keeps the newest entries up to the cap', () => {
    expect(appendCapped([1, 2, 3], [4, 5], 4)).toEqual([2, 3, 4, 5])
    expect(appendCapped([1], [2], 4)).toEqual([1, 2])
  })
})

describe('useLogLines', () => {
  beforeEach(() => handlers.clear())

  it('keeps at most MAX_LINES of a log that keeps growing: the newest, with their offsets', async () => {
    vi.mocked(api.logs.tail).mockResolvedValue({lines: lines(10), offset: 100} as never)
    const {result} = renderHook(() => useLogLines('p1', 'a1'))
    await waitFor(() => expect(result.current.lines).toHaveLength(10))
    // An hour of a chatty agent: far more lines than the cap, in batches.
    const batch = 5000
    let offset = 100
    let next = 10
    act(() => {
      for (let b = 0; b < (MAX_LINES * 3) / batch; b++) {
        offset += batch * 8
        handlers.get('agent:log')!({projectId: 'p1', agentId: 'a1', lines: lines(batch, next), offset})
        next += batch
      }
    })
    expect(result.current.lines).toHaveLength(MAX_LINES)
    expect(result.current.starts).toHaveLength(MAX_LINES)
    expect(result.current.lines.at(-1)).toBe(`line ${next - 1}`)
    expect(result.current.lines[0]).toBe(`line ${next - MAX_LINES}`)
  })
})
