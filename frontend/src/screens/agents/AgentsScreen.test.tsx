import {act, cleanup, fireEvent, render, screen, within} from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api} from '../../api'
import {keys} from '../../state/queries'
import {useUI} from '../../state/ui'
import {agent, at, figures, project as fixture} from '../../test/fixtures'
import {StopAllDialog} from './AgentDialogs'
import {AgentsScreen} from './AgentsScreen'

vi.mock('../../api', async (orig) => ({
  ...(await orig<typeof import('../../api')>()),
  api: {
    agents: {list: vi.fn(), events: vi.fn(), stop: vi.fn(), start: vi.fn(), stopAll: vi.fn(), watch: vi.fn(), statsHistory: vi.fn(), ack: vi.fn()},
    logs: {tail: vi.fn(), follow: vi.fn(), unfollow: vi.fn()},
    settings: {get: vi.fn()},
    projects: {list: vi.fn()},
    setTitle: vi.fn(),
  },
}))

const project = fixture({agents: 3, running: 1, attention: 1})
const AGENTS = [
  agent({id: 'web', projectId: 'p1', status: 'running', startedAt: at(60)}),
  agent({id: 'bad', projectId: 'p1', status: 'failed', exitReason: 'failed', exitCode: 2, stoppedAt: at(5)}),
  agent({id: 'loop', projectId: 'p1', status: 'failed', keepAlive: true, desired: 'running', restartFailureCount: 1, nextRestartAt: at(-20)}),
  agent({id: 'idle', projectId: 'p1'}),
]

function renderScreen(ui: React.ReactNode = <AgentsScreen project={project}/>) {
  render(<QueryClientProvider client={new QueryClient()}>{ui}</QueryClientProvider>)
}
const key = (k: string, target: Element = document.body) => act(() => {
  fireEvent.keyDown(target, {key: k})
})

describe('AgentsScreen', () => {
  beforeEach(() => {
    useUI.setState({projectId: 'p1', agentId: null, cursorId: null, dialog: null, filter: '', groups: new Set(), collapsed: new Set()})
    vi.mocked(api.agents.list).mockResolvedValue(AGENTS)
    vi.mocked(api.agents.events).mockResolvedValue([])
    vi.mocked(api.agents.watch).mockResolvedValue(undefined)
    vi.mocked(api.agents.statsHistory).mockResolvedValue([])
    vi.mocked(api.agents.stop).mockResolvedValue(AGENTS[0])
    vi.mocked(api.logs.tail).mockReturnValue(new Promise(() => {}))
    vi.mocked(api.logs.unfollow).mockResolvedValue(undefined as never)
    vi.mocked(api.settings.get).mockReturnValue(new Promise(() => {}))
    vi.mocked(api.projects.list).mockResolvedValue([project])
  })

  it('keys: ↓ moves in the order shown (what needs you first), Enter opens, s stops, Esc closes, / filters', async () => {
    renderScreen()
    await screen.findByText('web')
    key('ArrowDown')
    expect(useUI.getState().cursorId).toBe('bad')
    key('ArrowDown')
    key('ArrowDown')
    expect(useUI.getState().cursorId).toBe('loop')
    key('ArrowUp')
    expect(useUI.getState().cursorId).toBe('web')
    key('Enter')
    expect(await screen.findByRole('region', {name: 'Agent web'})).toBeInTheDocument()
    key('s')
    expect(api.agents.stop).toHaveBeenCalledWith('p1', 'web')
    key('Escape')
    expect(screen.queryByRole('region', {name: 'Agent web'})).toBeNull()
    key('/')
    expect(document.activeElement).toBe(screen.getByLabelText('Filter agents'))
    fireEvent.change(screen.getByLabelText('Filter agents'), {target: {value: 'loop'}})
    expect(document.querySelectorAll('tr[data-agent]')).toHaveLength(1)
    // Typing in the box is not a command.
    key('s', screen.getByLabelText('Filter agents'))
    expect(api.agents.stop).toHaveBeenCalledTimes(1)
  })

  const groupOfRow = (id: string) => document.querySelector(`tr[data-agent="${id}"]`)?.closest('tbody')?.getAttribute('data-group')
  const acked = {...AGENTS[1], acknowledgedAt: at(0)}

  it('acknowledge with the A key: the row leaves Needs you; nothing to acknowledge, no call', async () => {
    vi.mocked(api.agents.ack).mockResolvedValue(acked)
    renderScreen()
    await screen.findByText('web')
    expect(groupOfRow('bad')).toBe('attention')
    key('ArrowDown') // the cursor on bad, first in Needs you
    key('a')
    expect(api.agents.ack).toHaveBeenCalledWith('p1', 'bad')
    await vi.waitFor(() => expect(groupOfRow('bad')).toBe('idle'))
    act(() => useUI.getState().setCursor('web'))
    key('A')
    expect(api.agents.ack).toHaveBeenCalledTimes(1)
  })

  it("acknowledge from the row's menu and from the detail; only for an agent that needs you", async () => {
    vi.mocked(api.agents.ack).mockResolvedValue(acked)
    renderScreen()
    await screen.findByText('web')
    fireEvent.click(screen.getByRole('button', {name: 'More actions for web'}))
    expect(screen.queryByRole('menuitem', {name: 'Acknowledge'})).toBeNull()
    key('Escape')
    fireEvent.click(screen.getByRole('button', {name: 'More actions for bad'}))
    fireEvent.click(screen.getByRole('menuitem', {name: 'Acknowledge'}))
    expect(api.agents.ack).toHaveBeenCalledWith('p1', 'bad')
    await vi.waitFor(() => expect(groupOfRow('bad')).toBe('idle'))
    vi.mocked(api.agents.list).mockResolvedValue([AGENTS[0], {...AGENTS[1], id: 'bad2'}])
    cleanup()
    useUI.setState({agentId: 'bad2'})
    renderScreen()
    const detail = await screen.findByRole('region', {name: 'Agent bad2'})
    fireEvent.click(detail.querySelector('button[data-op="ack"]')!)
    expect(api.agents.ack).toHaveBeenCalledWith('p1', 'bad2')
  })

  it('the Runs column and the detail’s run picker count the same runs', async () => {
    const ev = (time: number, from: string, to: string) => ({time: at(time), event: 'transition', agentId: 'web', from, to})
    vi.mocked(api.agents.events).mockResolvedValue([ev(300, 'not_started', 'spawning'), ev(299, 'spawning', 'running'),
      ev(200, 'running', 'completed'), ev(100, 'completed', 'spawning'), ev(99, 'spawning', 'running')])
    useUI.setState({agentId: 'web'})
    renderScreen()
    const picker = await screen.findByRole('combobox', {name: 'Jump to a run'})
    expect(picker.querySelector('option[value=""]')).toHaveTextContent('2 runs — jump to…')
    await vi.waitFor(() => expect(document.querySelector('tr[data-agent="web"] td.c-runs')).toHaveTextContent(/^2$/))
  })

  it('the chips show one group; Stop all counts agents waiting to restart', async () => {
    renderScreen()
    await screen.findByText('web')
    fireEvent.click(screen.getByRole('button', {name: /Needs you/, pressed: false}))
    expect(Array.from(document.querySelectorAll('tr[data-agent]')).map((r) => r.getAttribute('data-agent'))).toEqual(['bad'])
    expect(screen.getByRole('button', {name: /^Stop all \(2\)/})).toBeEnabled()
  })

  it('Stop all asks first, with the count, and says restarts are cancelled', async () => {
    vi.mocked(api.agents.stopAll).mockResolvedValue([{agentId: 'web'}, {agentId: 'loop'}])
    useUI.setState({dialog: {kind: 'stopAll'}})
    renderScreen(<StopAllDialog/>)
    const dialog = await screen.findByRole('dialog', {name: 'Stop 2 running agents?'})
    expect(dialog).toHaveTextContent('1 of them is waiting for a keep-alive restart; that restart is cancelled.')
    expect(api.agents.stopAll).not.toHaveBeenCalled()
    fireEvent.click(screen.getByRole('button', {name: 'Stop 2'}))
    await vi.waitFor(() => expect(api.agents.stopAll).toHaveBeenCalledWith('p1'))
    await vi.waitFor(() => expect(useUI.getState().dialog).toBeNull())
  })
  it('the header says running, what needs you and today’s cost; the shown project is watched for CPU and memory', async () => {
    vi.mocked(api.agents.events).mockClear()
    vi.mocked(api.agents.list).mockResolvedValue([...AGENTS,
      agent({id: 'claude', projectId: 'p1', status: 'completed', totals: {runs: 2, costUsd: 0.5}})])
    renderScreen(<AgentsScreen project={{...project, live: 1, costToday: 0.25, totals: figures({runs: 2, costUsd: 0.5})}}/>)
    await screen.findByText('web')
    const summary = document.querySelector('[data-summary]')!
    expect(summary).toHaveTextContent('1 running1 needs you$0.25 today')
    expect(summary.querySelector('.cost-today')).toHaveAttribute('title', expect.stringContaining('$0.50 in all'))
    expect(api.agents.watch).toHaveBeenCalledWith('p1')
  })

  it('no cost today when no agent reports one', async () => {
    renderScreen()
    await screen.findByText('web')
    expect(document.querySelector('[data-summary] .cost-today')).toBeNull()
  })
})

describe('AgentsScreen by keyboard', () => {
  beforeEach(() => {
    useUI.setState({projectId: 'p1', agentId: null, cursorId: null, dialog: null, filter: '', groups: new Set(), collapsed: new Set(),
      sort: {key: 'default', desc: false}})
    vi.mocked(api.agents.list).mockResolvedValue(AGENTS)
    vi.mocked(api.agents.events).mockResolvedValue([])
    vi.mocked(api.agents.watch).mockResolvedValue(undefined)
    vi.mocked(api.agents.statsHistory).mockResolvedValue([])
    vi.mocked(api.agents.stop).mockClear().mockResolvedValue(AGENTS[0])
    vi.mocked(api.agents.start).mockClear().mockResolvedValue(AGENTS[3])
    vi.mocked(api.logs.tail).mockReturnValue(new Promise(() => {}))
    vi.mocked(api.logs.unfollow).mockResolvedValue(undefined as never)
    vi.mocked(api.settings.get).mockReturnValue(new Promise(() => {}))
    vi.mocked(api.projects.list).mockResolvedValue([project])
  })
  const active = () => document.activeElement as HTMLElement
  const rowOf = (id: string) => document.querySelector<HTMLElement>(`tr[data-agent="${id}"]`)!
  const groupRow = (name: RegExp) => screen.getByRole('row', {name})

  it('the list is a treegrid: groups are parent rows, agents their rows, each with its place; one row is in the Tab order', async () => {
    renderScreen()
    await screen.findByText('web')
    const grid = screen.getByRole('treegrid', {name: 'Agents'})
    expect(grid).toHaveAccessibleDescription(/Arrow keys move between agents/)
    const heads = within(grid).getAllByRole('row').filter((r) => r.getAttribute('aria-level') === '1')
    expect(heads.map((r) => [r.textContent, r.getAttribute('aria-expanded'), r.getAttribute('aria-posinset'), r.getAttribute('aria-setsize')]))
      .toEqual([['▾ Needs you1', 'true', '1', '3'], ['▾ Working2', 'true', '2', '3'], ['▾ Idle1', 'true', '3', '3']])
    const loop = rowOf('loop')
    expect(loop).toHaveAttribute('aria-level', '2')
    expect([loop.getAttribute('aria-posinset'), loop.getAttribute('aria-setsize')]).toEqual(['2', '2'])
    expect(within(loop).getByRole('rowheader')).toHaveTextContent('loop')
    expect(within(loop).getAllByRole('gridcell').length).toBeGreaterThan(4)
    expect(within(grid).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(
      ['Agent', 'Status', 'Activity', 'Run time', 'Last run', 'Runs', 'CPU', 'Mem', 'Actions'])
    // One row in the Tab order (the first, with no cursor yet), with its two buttons; nothing else of the list.
    const tabbable = Array.from(grid.querySelectorAll('[tabindex="0"]'))
    expect(tabbable).toEqual([rowOf('bad'), ...within(rowOf('bad')).getAllByRole('button')])
    expect(within(grid).getAllByRole('button', {name: /More actions/}).filter((b) => b.tabIndex === 0)).toHaveLength(1)
  })

  it('Tab comes to the current row, then its actions, then leaves; ↑ ↓ move row by row, → ← into its cells and back', async () => {
    const user = userEvent.setup()
    renderScreen()
    await screen.findByText('web')
    const chips = screen.getAllByRole('button', {pressed: false}).filter((b) => b.classList.contains('chip') && !b.hasAttribute('disabled'))
    act(() => chips[chips.length - 1].focus())
    await user.tab()
    expect(active()).toBe(rowOf('bad'))
    expect(useUI.getState().cursorId).toBe('bad')
    await user.tab()
    expect(active()).toHaveAccessibleName('Start')
    await user.tab()
    expect(active()).toHaveAccessibleName('More actions for bad')
    await user.tab()
    expect(screen.getByRole('treegrid')).not.toContainElement(active())
    await user.tab({shift: true})
    await user.tab({shift: true})
    await user.tab({shift: true})
    expect(active()).toBe(rowOf('bad'))

    await user.keyboard('{ArrowRight}')
    expect(active()).toBe(within(rowOf('bad')).getByRole('rowheader'))
    await user.keyboard('{ArrowRight}')
    expect(active()).toHaveClass('c-status')
    await user.keyboard('{End}')
    expect(active()).toHaveAccessibleName('More actions for bad')
    await user.keyboard('{ArrowLeft}')
    expect(active()).toHaveAccessibleName('Start')
    await user.keyboard('{Home}{ArrowLeft}')
    expect(active()).toBe(rowOf('bad'))
    await user.keyboard('{ArrowDown}')
    expect(active()).toBe(groupRow(/Working/))
    await user.keyboard('{ArrowDown}')
    expect(active()).toBe(rowOf('web'))
    expect(useUI.getState().cursorId).toBe('web')
    // A cell's column is kept from row to row.
    await user.keyboard('{ArrowRight}{ArrowRight}{ArrowDown}')
    expect(active()).toHaveClass('c-status')
    expect(rowOf('loop')).toContainElement(active())
    await user.keyboard('{ArrowLeft}{ArrowLeft}{ArrowUp}')
    expect(active()).toBe(rowOf('web'))
    // The Tab order follows: the row the focus is on, and its buttons.
    expect(rowOf('web')).toHaveAttribute('tabindex', '0')
    expect(rowOf('bad')).toHaveAttribute('tabindex', '-1')
    expect(within(rowOf('bad')).getByRole('button', {name: 'Start'})).toHaveAttribute('tabindex', '-1')
    await user.keyboard('{End}')
    expect(active()).toBe(rowOf('idle'))
    await user.keyboard('{Home}')
    expect(active()).toBe(groupRow(/Needs you/))
  })

  it('a group closes with ← and opens with → (or Enter); s and a act on the row the focus is on, not from a group’s line', async () => {
    const user = userEvent.setup()
    renderScreen()
    await screen.findByText('web')
    act(() => rowOf('web').focus())
    await user.keyboard('{ArrowUp}')
    const working = groupRow(/Working/)
    expect(active()).toBe(working)
    await user.keyboard('{ArrowLeft}')
    expect(working).toHaveAttribute('aria-expanded', 'false')
    expect(document.querySelector('tr[data-agent="web"]')).toBeNull()
    await user.keyboard('s')
    expect(api.agents.stop).not.toHaveBeenCalled()
    expect(api.agents.start).not.toHaveBeenCalled()
    await user.keyboard('{ArrowRight}')
    expect(working).toHaveAttribute('aria-expanded', 'true')
    await user.keyboard('{Enter}')
    expect(working).toHaveAttribute('aria-expanded', 'false')
    await user.keyboard(' ')
    expect(working).toHaveAttribute('aria-expanded', 'true')
    expect(active()).toBe(working)
    await user.keyboard('{ArrowDown}s')
    expect(api.agents.stop).toHaveBeenCalledWith('p1', 'web')
  })

  it('Enter opens the row; with the detail open it follows the focus; Esc closes it, the focus stays on the row', async () => {
    const user = userEvent.setup()
    renderScreen()
    await screen.findByText('web')
    act(() => rowOf('web').focus())
    await user.keyboard('{Enter}')
    expect(await screen.findByRole('region', {name: 'Agent web'})).toBeInTheDocument()
    expect(active()).toBe(rowOf('web'))
    await user.keyboard('{ArrowDown}')
    expect(await screen.findByRole('region', {name: 'Agent loop'})).toBeInTheDocument()
    expect(active()).toBe(rowOf('loop'))
    await user.keyboard('{Escape}')
    expect(screen.queryByRole('region', {name: /^Agent /})).toBeNull()
    expect(active()).toBe(rowOf('loop'))
    // Enter on a plain cell opens too; on a button, it is the button's.
    await user.keyboard('{ArrowRight}{ArrowRight}{Enter}')
    expect(await screen.findByRole('region', {name: 'Agent loop'})).toBeInTheDocument()
  })

  it('↑ from the first row reaches the column headers, which sort (aria-sort, and said); ↓ comes back', async () => {
    const user = userEvent.setup()
    renderScreen()
    await screen.findByText('web')
    act(() => groupRow(/Needs you/).focus())
    await user.keyboard('{ArrowUp}')
    expect(active()).toHaveAccessibleName('Agent')
    await user.keyboard('{ArrowRight}')
    expect(active()).toHaveAccessibleName('Status')
    await user.keyboard('{Enter}')
    const status = screen.getByRole('columnheader', {name: /Status/})
    expect(status).toHaveAttribute('aria-sort', 'ascending')
    expect(screen.getByRole('columnheader', {name: 'Agent'})).not.toHaveAttribute('aria-sort')
    expect(screen.getAllByRole('status').map((s) => s.textContent)).toContain('Sorted by Status, ascending')
    await user.keyboard('{Enter}')
    expect(status).toHaveAttribute('aria-sort', 'descending')
    await user.keyboard('{End}')
    expect(active()).toHaveTextContent('Actions')
    await user.keyboard('{ArrowDown}')
    expect(active()).toBe(groupRow(/Needs you/))
    await user.keyboard('{ArrowDown}{ArrowRight}{ArrowUp}{ArrowUp}')
    expect(active()).toHaveAccessibleName(/^Agent/)
  })

  it("a row's menu by keyboard: opens on its first item, ↓ Home End move, Esc and a choice give the focus back to ⋯", async () => {
    const user = userEvent.setup()
    renderScreen()
    await screen.findByText('web')
    act(() => rowOf('web').focus())
    await user.keyboard('{ArrowRight}{End}{Enter}')
    const menu = screen.getByRole('menu', {name: 'More actions for web'})
    const items = within(menu).getAllByRole('menuitem')
    expect(active()).toBe(items[0])
    await user.keyboard('{ArrowDown}')
    expect(active()).toBe(items[1])
    await user.keyboard('{End}')
    expect(active()).toBe(items[items.length - 1])
    await user.keyboard('{Home}')
    expect(active()).toBe(items[0])
    await user.keyboard('{Escape}')
    expect(screen.queryByRole('menu')).toBeNull()
    expect(active()).toHaveAccessibleName('More actions for web')
    await user.keyboard('{Enter}{End}{Enter}') // Copy id
    expect(screen.queryByRole('menu')).toBeNull()
    expect(active()).toHaveAccessibleName('More actions for web')
    await user.keyboard('{Enter}')
    await user.tab() // Tab closes the menu and goes on from ⋯
    expect(screen.queryByRole('menu')).toBeNull()
    expect(rowOf('web')).not.toContainElement(active())
  })

  it('a row that moves to another group keeps the focus; a list the focus left does not take it back', async () => {
    const qc = new QueryClient()
    render(<QueryClientProvider client={qc}><AgentsScreen project={project}/></QueryClientProvider>)
    await screen.findByText('web')
    act(() => rowOf('web').focus())
    const failed = (id: string) => AGENTS.map((a) => (a.id === id ? {...a, status: 'failed' as const, exitReason: 'failed', exitCode: 1, stoppedAt: at(1)} : a))
    act(() => qc.setQueryData(keys.agents('p1'), failed('web')))
    await vi.waitFor(() => expect(rowOf('web').closest('tbody')).toHaveAttribute('data-group', 'attention'))
    expect(active()).toBe(rowOf('web'))
    act(() => active().blur()) // a click on nothing that takes the focus
    act(() => qc.setQueryData(keys.agents('p1'), AGENTS))
    await vi.waitFor(() => expect(rowOf('web').closest('tbody')).toHaveAttribute('data-group', 'working'))
    expect(active()).toBe(document.body)
  })

  it('the filter and the chips say what is listed', async () => {
    const user = userEvent.setup()
    renderScreen()
    await screen.findByText('web')
    const count = screen.getAllByRole('status').find((s) => s.classList.contains('shown'))!
    expect(count).toHaveTextContent('4 agents')
    await user.click(screen.getByRole('button', {name: /Needs you/, pressed: false}))
    expect(count).toHaveTextContent('1 of 4')
    expect(screen.getByRole('button', {name: /Needs you/})).toHaveAttribute('aria-pressed', 'true')
  })
})
