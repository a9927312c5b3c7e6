import {act, cleanup, fireEvent, render, screen} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api} from '../../api'
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
