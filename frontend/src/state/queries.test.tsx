import {act, render, renderHook} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import type {ReactNode} from 'react'
import {Toaster} from 'sonner'
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'
import {api, type EventName} from '../api'
import {agent, project} from '../test/fixtures'
import {keys, REFRESH_MS, useEngineEvents} from './queries'

const handlers = new Map<string, (data: unknown) => void>()

vi.mock('../api', async (orig) => {
  const real = await orig<typeof import('../api')>()
  return {
    ...real,
    api: {
      projects: {list: vi.fn(() => Promise.resolve([]))},
      agents: {list: vi.fn(() => Promise.resolve([])), events: vi.fn(() => Promise.resolve([]))},
    },
    onEvent: (name: EventName, h: (d: unknown) => void) => {
      handlers.set(name, h)
      return () => handlers.delete(name)
    },
  }
})

function setup() {
  const qc = new QueryClient()
  // The lists the shown screens hold.
  qc.setQueryData(keys.projects, [])
  qc.setQueryData(keys.agents('p1'), [])
  qc.setQueryData(keys.feed('p1'), {entries: [], runs: {}})
  const invalidated = vi.spyOn(qc, 'invalidateQueries')
  const wrapper = ({children}: {children: ReactNode}) => <QueryClientProvider client={qc}>{children}</QueryClientProvider>
  renderHook(() => useEngineEvents(), {wrapper})
  const count = (key: readonly unknown[]) => invalidated.mock.calls.filter(([f]) =>
    JSON.stringify((f as {queryKey?: unknown})?.queryKey) === JSON.stringify(key)).length
  return {count}
}

describe('pushed events read the lists again at a bounded rate', () => {
  beforeEach(() => {
    vi.useFakeTimers()
    handlers.clear()
  })
  afterEach(() => vi.useRealTimers())

  it('a burst of 200 state changes reads the project list, the agents and the feed once each per period, not per event', () => {
    const {count} = setup()
    const burst = () => {
      for (let i = 0; i < 200; i++) {
        act(() => handlers.get('agent:state')!(agent({id: `a${i % 40}`, projectId: 'p1', status: 'running'})))
      }
    }
    burst()
    // Nothing read yet: the reads wait for the end of their period.
    expect([count(keys.projects), count(keys.agents('p1')), count(keys.feed('p1'))]).toEqual([0, 0, 0])
    act(() => vi.advanceTimersByTime(REFRESH_MS.projects))
    expect(count(keys.projects)).toBe(1)
    act(() => vi.advanceTimersByTime(REFRESH_MS.feed))
    expect([count(keys.projects), count(keys.agents('p1')), count(keys.feed('p1'))]).toEqual([1, 1, 1])
    // Events that keep coming: one read per period each, however many events.
    for (let s = 0; s < 6; s++) {
      burst()
      act(() => vi.advanceTimersByTime(REFRESH_MS.feed))
    }
    expect(count(keys.feed('p1'))).toBe(7)
    expect(count(keys.agents('p1'))).toBe(7)
    expect(count(keys.projects)).toBe(7)
  })

  it('removals and project state changes share the project list’s period', () => {
    const {count} = setup()
    act(() => {
      handlers.get('agent:removed')!({projectId: 'p1', agentId: 'a1'})
      handlers.get('project:state')!({id: 'p1', paused: false})
      handlers.get('agent:state')!(agent({id: 'a2', projectId: 'p1'}))
    })
    act(() => vi.advanceTimersByTime(REFRESH_MS.projects))
    expect(count(keys.projects)).toBe(1)
  })
})

describe('toasts', () => {
  it('one per agent at most: a crash loop replaces its toast instead of stacking one per crash', async () => {
    handlers.clear()
    vi.mocked(api.agents.list).mockResolvedValue([])
    const qc = new QueryClient()
    const Events = () => {
      useEngineEvents()
      return null
    }
    render(<QueryClientProvider client={qc}><Events/><Toaster visibleToasts={50}/></QueryClientProvider>)
    for (let i = 1; i <= 20; i++) {
      act(() => handlers.get('notify')!({level: 'warning', title: 'crasher exited', message: `crash ${i}`, projectId: 'p1', agentId: 'crasher'}))
    }
    act(() => handlers.get('notify')!({level: 'warning', title: 'other exited', message: 'once', projectId: 'p1', agentId: 'other'}))
    await vi.waitFor(() => expect(document.querySelectorAll('[data-sonner-toast]')).toHaveLength(2))
    expect(document.body).toHaveTextContent('crash 20')
    expect(document.body).not.toHaveTextContent('crash 19')
  })
})

describe('notifications name projects by their names', () => {
  it('says the project by its name, in the title when it is not the one shown, and never its id', async () => {
    const {notificationWords} = await import('./queries')
    const projects = [project({id: 'myrepo-8783cf1d80', name: 'myrepo', path: '/r'})]
    const n = {level: 'warning', kind: 'budget', title: 'Daily budget reached', projectId: 'myrepo-8783cf1d80', native: false,
      message: "Project myrepo-8783cf1d80 paused: daily budget $0.0002 reached ($0.0003 today). Raise it in the project's settings or wait for tomorrow."}
    const other = notificationWords(n, projects, 'elsewhere')
    expect(other.title).toBe('Daily budget reached · myrepo')
    expect(other.message).toContain('Project myrepo paused')
    expect(other.message).not.toContain('8783cf1d80')
    expect(notificationWords({...n, projectName: 'My repo'}, undefined, 'myrepo-8783cf1d80').title).toBe('Daily budget reached')
  })
})
