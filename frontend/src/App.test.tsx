import {act, cleanup, render, screen, within} from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api, getEngine, type EventName, type WhileClosed} from './api'
import App from './App'
import {keys, summarize} from './state/queries'
import {useUI} from './state/ui'
import {agent, at, project as fixture} from './test/fixtures'

const handlers = new Map<string, (data: unknown) => void>()

vi.mock('./api', async (orig) => {
  const real = await orig<typeof import('./api')>()
  return {
    ...real,
    getEngine: vi.fn(),
    api: {
      hosts: {list: vi.fn(() => Promise.resolve([])), use: vi.fn(() => Promise.resolve()), add: vi.fn(), remove: vi.fn()},
      projects: {list: vi.fn(), select: vi.fn(), pickFolder: vi.fn(), add: vi.fn(), whileClosed: vi.fn()},
      agents: {list: vi.fn(), events: vi.fn(), watch: vi.fn(() => Promise.resolve()), statsHistory: vi.fn(() => Promise.resolve([]))},
      logs: {tail: vi.fn(), follow: vi.fn(), unfollow: vi.fn()},
      settings: {get: vi.fn()},
      setTitle: vi.fn(),
    },
    // Pushed events go through the real check against the engine's description.
    onEvent: (name: EventName, h: (d: unknown) => void) => {
      handlers.set(name, (data) => {
        if (real.eventProblems(name, data).length === 0) h(data)
      })
      return () => handlers.delete(name)
    },
  }
})

const project = fixture({agents: 1})

function renderApp(client = new QueryClient()) {
  render(<QueryClientProvider client={client}><App/></QueryClientProvider>)
}

describe('App', () => {
  beforeEach(() => {
    handlers.clear()
    useUI.setState({projectId: null, agentId: null, dialog: null})
    vi.mocked(api.projects.select).mockResolvedValue({projectId: 'p1', total: 0, counts: {}, agents: []})
    vi.mocked(api.projects.whileClosed).mockResolvedValue(null)
    vi.mocked(getEngine).mockResolvedValue({state: 'embedded', url: 'http://127.0.0.1:1', pid: 1, dataDir: '/d'})
    localStorage.clear()
  })

  const closedSummary = (at: string): WhileClosed => ({at, projects: [
    {projectId: 'p1', total: 3, counts: {exited_while_closed: 1, reattached: 1}, agents: [
      {agentId: 'tests', outcome: 'exited_while_closed', status: 'failed', exitCode: 3, recovery: 'failed'},
      {agentId: 'web', outcome: 'reattached', status: 'running', recovery: 'keep'},
    ]},
    {projectId: 'p2', total: 1, counts: {unknown_exit: 1}, agents: [
      {agentId: 'job', outcome: 'unknown_exit', status: 'interrupted', detail: 'no process was recorded for this run'},
    ]},
  ]})

  it('while Shepherd was closed: one summary for every project on the first screen, once per engine start, again from the feed', async () => {
    vi.mocked(api.projects.list).mockResolvedValue([project, {...project, id: 'p2', name: 'other'}])
    vi.mocked(api.agents.list).mockResolvedValue([])
    vi.mocked(api.agents.events).mockResolvedValue([])
    renderApp()
    await screen.findByText(/No agents in this project yet/)
    expect(screen.queryByRole('dialog')).toBeNull() // the engine is still loading: nothing yet
    act(() => handlers.get('engine:while-closed')!(closedSummary('2026-05-01T12:00:00Z')))
    const dialog = await screen.findByRole('dialog', {name: 'While Shepherd was closed'})
    expect(dialog).toHaveTextContent('demo 1 exited, 1 re-attached')
    expect(dialog.querySelector('[data-outcome="exited_while_closed"]')).toHaveTextContent('testsexited — exit code 3· marked failed from its log')
    expect(dialog.querySelector('[data-outcome="reattached"]')).toHaveTextContent('webstill running — re-attached')
    expect(dialog.querySelector('[data-while-closed="p2"]')).toHaveTextContent('other 1 ended (reason unknown)jobended — reason unknownno process was recorded')
    // Its first load repeats it: no toast on top.
    act(() => handlers.get('project:synced')!({projectId: 'p1', total: 3, counts: {exited_while_closed: 1, reattached: 1, unchanged: 1}, agents: []}))
    screen.getByRole('button', {name: 'OK'}).click()
    await vi.waitFor(() => expect(screen.queryByRole('dialog')).toBeNull())
    expect(document.querySelector('[data-sonner-toast]')?.textContent ?? null).toBeNull()
    // The same start again (a reload): not shown again.
    cleanup()
    vi.mocked(api.projects.whileClosed).mockResolvedValue(closedSummary('2026-05-01T12:00:00Z'))
    renderApp()
    await screen.findByText(/No agents in this project yet/)
    // The summary has come once the feed offers it; the same start's is not shown again. From the feed, it is.
    act(() => useUI.getState().setFeedOpen(true))
    const fromFeed = await screen.findByRole('button', {name: /While Shepherd was closed/})
    expect(screen.queryByRole('dialog')).toBeNull()
    act(() => fromFeed.click())
    expect(await screen.findByRole('dialog', {name: 'While Shepherd was closed'})).toBeInTheDocument()
    act(() => useUI.getState().close())
    act(() => useUI.getState().setFeedOpen(false))
    // Another engine start: shown again.
    act(() => handlers.get('engine:while-closed')!(closedSummary('2026-05-02T08:00:00Z')))
    expect(await screen.findByRole('dialog', {name: 'While Shepherd was closed'})).toBeInTheDocument()
  })

  it('first launch: says what Shepherd does and offers Add project', async () => {
    vi.mocked(api.projects.list).mockResolvedValue([])
    renderApp()
    expect(await screen.findByRole('heading', {name: 'Welcome to Shepherd'})).toBeInTheDocument()
    expect(screen.getByText(/supervise|runs and watches/)).toBeInTheDocument()
    screen.getByRole('button', {name: 'Add project'}).click()
    expect(await screen.findByRole('dialog', {name: 'Add project'})).toBeInTheDocument()
  })

  it('shows the project’s agents and applies pushed state changes; malformed events are dropped', async () => {
    vi.mocked(api.projects.list).mockResolvedValue([project])
    vi.mocked(api.agents.list).mockResolvedValue([agent({id: 'web', projectId: 'p1', status: 'running', pid: 99})])
    renderApp()
    expect(await screen.findByText('web')).toBeInTheDocument()
    expect(api.projects.select).toHaveBeenCalledWith('p1')
    expect(api.setTitle).toHaveBeenCalledWith('Shepherd — demo · 1 agent')
    act(() => handlers.get('agent:state')!({status: 'failed'})) // no id: dropped
    expect(screen.getByText('running')).toBeInTheDocument()
    act(() => handlers.get('agent:state')!(agent({id: 'web', projectId: 'p1', status: 'failed', exitReason: 'failed', exitCode: 3})))
    expect(await screen.findByText('failed')).toBeInTheDocument()
    act(() => handlers.get('agent:removed')!({projectId: 'p1', agentId: 'web'}))
    expect(await screen.findByText(/No agents in this project yet/)).toBeInTheDocument()
  })

  it("the sidebar's Needs you count follows the list: an acknowledged failure is not counted, a wait for the user is", async () => {
    vi.mocked(api.projects.list).mockResolvedValue([{...project, agents: 2, attention: 1}])
    vi.mocked(api.agents.list).mockResolvedValue([
      agent({id: 'old', projectId: 'p1', status: 'failed', exitReason: 'failed', acknowledgedAt: '2026-05-01T11:00:00Z'}),
      agent({id: 'ask', projectId: 'p1', status: 'running', attention: 'waiting: permission for Bash',
        activity: {state: 'waiting', waiting: 'permission for Bash', needsYou: true}}),
    ])
    renderApp()
    expect(await screen.findByText('ask')).toBeInTheDocument()
    const nav = screen.getByRole('navigation', {name: 'Projects'})
    expect(nav.querySelector('[data-attention]')?.getAttribute('data-attention')).toBe('1')
    const acked = agent({id: 'ask', projectId: 'p1', status: 'running', acknowledgedAt: '2026-05-01T12:00:00Z',
      activity: {state: 'waiting', waiting: 'permission for Bash', needsYou: true}})
    vi.mocked(api.agents.list).mockResolvedValue([acked]) // the list read again after the push
    act(() => handlers.get('agent:state')!(acked))
    await vi.waitFor(() => expect(nav.querySelector('[data-attention]')).toBeNull())
  })

  it("a toast never covers a dialog's buttons: while a dialog is open, toasts are under its backdrop", async () => {
    vi.mocked(api.projects.list).mockResolvedValue([project])
    vi.mocked(api.agents.list).mockResolvedValue([])
    renderApp()
    await screen.findByText(/No agents in this project yet/)
    act(() => handlers.get('notify')!({level: 'error', kind: 'failed', title: 'loop failed', message: 'exit code 1', projectId: 'p1', agentId: 'loop', native: false}))
    await screen.findByText('loop failed')
    const toaster = () => document.querySelector<HTMLElement>('[data-sonner-toaster]')!
    expect(toaster().style.zIndex).toBe('')
    act(() => useUI.getState().open({kind: 'addProject'}))
    await screen.findByRole('dialog', {name: 'Add project'})
    const overlayZ = Number(document.querySelector<HTMLElement>('.overlay')!.style.zIndex)
    expect(overlayZ).toBeGreaterThan(0)
    expect(Number(toaster().style.zIndex)).toBeLessThan(overlayZ)
    act(() => useUI.getState().close())
    await vi.waitFor(() => expect(toaster().style.zIndex).toBe(''))
  })

  it('"the engine went away" is said once, by the banner, not again by every view that cannot load', async () => {
    const gone = 'The engine (pid 4242) went away: connection refused'
    vi.mocked(getEngine).mockResolvedValue({state: 'lost', url: '', pid: 4242, dataDir: '', message: gone})
    vi.mocked(api.projects.list).mockResolvedValue([project])
    vi.mocked(api.agents.list).mockRejectedValue(gone)
    const client = new QueryClient({defaultOptions: {queries: {retry: false}}})
    renderApp(client)
    await screen.findByText('The engine this window was attached to went away')
    // The list's read has failed and the screen shows it (no agents), without its own "went away".
    await vi.waitFor(() => expect(client.getQueryState(keys.agents('p1'))?.status).toBe('error'))
    await screen.findByText(/No agents in this project yet/)
    expect(document.body.textContent!.match(/went away/g)).toHaveLength(1)
    expect(screen.getByRole('alert')).toHaveTextContent('pid 4242: connection refused')
  })

  it('Ctrl+A outside a text field selects nothing; in one it selects its text', async () => {
    vi.mocked(api.projects.list).mockResolvedValue([project])
    vi.mocked(api.agents.list).mockResolvedValue([agent({id: 'web', projectId: 'p1'})])
    renderApp()
    await screen.findByText('web')
    const press = (target: Element) => {
      const e = new KeyboardEvent('keydown', {key: 'a', ctrlKey: true, bubbles: true, cancelable: true})
      target.dispatchEvent(e)
      return e.defaultPrevented
    }
    expect(press(document.body)).toBe(true)
    expect(press(document.querySelector('tr[data-agent="web"]')!)).toBe(true)
    expect(press(screen.getByLabelText('Filter agents'))).toBe(false)
  })

  it('a toast about an agent has Show, which opens it', async () => {
    vi.mocked(api.projects.list).mockResolvedValue([project])
    vi.mocked(api.agents.list).mockResolvedValue([agent({id: 'ask', projectId: 'p1', status: 'running'})])
    vi.mocked(api.agents.events).mockResolvedValue([])
    vi.mocked(api.logs.tail).mockReturnValue(new Promise(() => {}))
    vi.mocked(api.logs.unfollow).mockResolvedValue(undefined as never)
    vi.mocked(api.settings.get).mockReturnValue(new Promise(() => {}))
    renderApp()
    await screen.findByText('ask')
    act(() => handlers.get('notify')!({level: 'warning', kind: 'waiting', title: 'ask waits for you', message: 'permission for Bash',
      projectId: 'p1', agentId: 'ask', native: false}))
    const toastEl = (await screen.findByText('ask waits for you')).closest('[data-sonner-toast]')!
    act(() => (toastEl.querySelector('[data-button]') as HTMLElement).click())
    expect(useUI.getState().agentId).toBe('ask')
  })

  it('the projects by keyboard: one in the Tab order, ↑ ↓ Home End move without loading, Enter selects', async () => {
    const user = userEvent.setup()
    vi.mocked(api.projects.list).mockResolvedValue([project, {...project, id: 'p2', name: 'other'}, {...project, id: 'p3', name: 'third'}])
    vi.mocked(api.agents.list).mockResolvedValue([])
    vi.mocked(api.agents.events).mockResolvedValue([])
    renderApp()
    await screen.findByText(/No agents in this project yet/)
    const nav = screen.getByRole('navigation', {name: 'Projects'})
    const items = Array.from(nav.querySelectorAll<HTMLElement>('button.project'))
    expect(items.map((b) => b.tabIndex)).toEqual([0, -1, -1])
    expect(items[0]).toHaveAttribute('aria-current', 'true')
    act(() => items[0].focus())
    await user.keyboard('{ArrowDown}')
    expect(document.activeElement).toBe(items[1])
    expect(useUI.getState().projectId).toBe('p1')
    await user.keyboard('{End}')
    expect(document.activeElement).toBe(items[2])
    await user.keyboard('{Home}{ArrowDown}{Enter}')
    expect(useUI.getState().projectId).toBe('p2')
    expect(items[1]).toHaveAttribute('aria-current', 'true')
    expect(items.map((b) => b.tabIndex)).toEqual([-1, 0, -1])
    // The selected project's own actions are next in the Tab order.
    await user.tab()
    expect(document.activeElement).toHaveAccessibleName('Rename')
  })

  it('the feed by keyboard: it takes the focus, ↓ moves, ← → change its tab, Enter shows the agent, Esc gives the focus back to the bell', async () => {
    const user = userEvent.setup()
    vi.mocked(api.projects.list).mockResolvedValue([project, {...project, id: 'p2', name: 'other'}])
    vi.mocked(api.agents.list).mockResolvedValue([agent({id: 'web', projectId: 'p1', status: 'failed', exitReason: 'failed', exitCode: 3})])
    vi.mocked(api.agents.events).mockImplementation(async (projectId: string) => projectId !== 'p1' ? [] : [
      {time: at(20), event: 'transition', agentId: 'web', from: 'running', to: 'failed', reason: 'exit', data: {exitReason: 'failed', exitCode: 3}},
      {time: at(10), event: 'start:failed', agentId: 'job', reason: 'exec: "job": not found'},
    ])
    vi.mocked(api.logs.tail).mockReturnValue(new Promise(() => {}))
    vi.mocked(api.logs.unfollow).mockResolvedValue(undefined as never)
    vi.mocked(api.settings.get).mockReturnValue(new Promise(() => {}))
    renderApp()
    await screen.findByText('web')
    const bell = screen.getByRole('button', {name: /^Activity:/})
    await user.click(bell)
    const feed = await screen.findByRole('feed')
    const articles = () => within(feed).getAllByRole('article')
    await vi.waitFor(() => expect(articles()).toHaveLength(2))
    expect(document.activeElement).toBe(articles()[0])
    expect(articles()[0]).toHaveAccessibleName('job could not start')
    expect(articles().map((a) => [a.getAttribute('aria-posinset'), a.getAttribute('aria-setsize')])).toEqual([['1', '2'], ['2', '2']])
    await user.keyboard('{ArrowDown}')
    expect(document.activeElement).toBe(articles()[1])
    expect(articles().map((a) => a.tabIndex)).toEqual([-1, 0])
    await user.keyboard('{Enter}')
    expect(useUI.getState().agentId).toBe('web')
    // The tabs: the selected one in the Tab order, ← → change it; the list is its panel.
    const tabs = within(screen.getByRole('complementary', {name: 'Activity'})).getAllByRole('tab')
    expect(tabs.map((t) => t.tabIndex)).toEqual([0, -1])
    act(() => tabs[0].focus())
    await user.keyboard('{ArrowRight}')
    expect(document.activeElement).toBe(tabs[1])
    expect(tabs[1]).toHaveAttribute('aria-selected', 'true')
    expect(screen.getByRole('tabpanel', {name: 'All projects'})).toContainElement(feed)
    expect(feed).toHaveAccessibleName('Activity of all projects')
    await user.keyboard('{ArrowLeft}')
    expect(tabs[0]).toHaveAttribute('aria-selected', 'true')
    act(() => articles()[1].focus())
    await user.keyboard('{Escape}')
    expect(screen.queryByRole('feed')).toBeNull()
    expect(document.activeElement).toBe(bell)
  })

  it('summarises a sync', () => {
    expect(summarize({projectId: 'p', total: 3, counts: {exited_while_closed: 2, reattached: 1, unchanged: 4}, agents: []}))
      .toBe('2 agents exited while Shepherd was closed, 1 re-attached')
    expect(summarize({projectId: 'p', total: 1, counts: {unchanged: 1}, agents: []})).toBe('')
  })
})
