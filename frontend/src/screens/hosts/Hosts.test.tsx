import {act, render, screen, within} from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api, ApiError, getEngine, type EventName, type Host} from '../../api'
import App from '../../App'
import {useUI} from '../../state/ui'
import {agent, project as fixture} from '../../test/fixtures'

const handlers = new Map<string, (data: unknown) => void>()

vi.mock('../../api', async (orig) => {
  const real = await orig<typeof import('../../api')>()
  return {
    ...real,
    getEngine: vi.fn(),
    api: {
      hosts: {list: vi.fn(), use: vi.fn(() => Promise.resolve()), add: vi.fn(), remove: vi.fn()},
      projects: {list: vi.fn(), select: vi.fn(), pickFolder: vi.fn(), add: vi.fn(), whileClosed: vi.fn()},
      agents: {list: vi.fn(), events: vi.fn(), watch: vi.fn(() => Promise.resolve()), statsHistory: vi.fn(() => Promise.resolve([]))},
      logs: {tail: vi.fn(), follow: vi.fn(), unfollow: vi.fn()},
      settings: {get: vi.fn()},
      setTitle: vi.fn(),
    },
    onEvent: (name: EventName, h: (d: unknown) => void) => {
      handlers.set(name, (data) => {
        if (real.eventProblems(name, data).length === 0) h(data)
      })
      return () => handlers.delete(name)
    },
  }
})

const local = fixture({agents: 1})
const onBox = {...fixture({agents: 1}), id: 'pb', name: 'remote-proj', path: '/srv/remote-proj'}
const box = (over: Partial<Host> = {}): Host => ({name: 'box', url: 'ssh://me@10.0.0.2', state: 'connected', since: '2026-05-01T14:02:00Z',
  agents: 2, running: 1, needsYou: 0, ...over})

function renderApp() {
  render(<QueryClientProvider client={new QueryClient()}><App/></QueryClientProvider>)
}

describe('hosts in the window', () => {
  beforeEach(() => {
    handlers.clear()
    useUI.setState({host: null, projectId: null, agentId: null, dialog: null})
    localStorage.clear()
    vi.mocked(api.projects.select).mockResolvedValue({projectId: 'p1', total: 0, counts: {}, agents: []})
    vi.mocked(api.projects.whileClosed).mockResolvedValue(null)
    vi.mocked(getEngine).mockResolvedValue({state: 'embedded', url: 'http://127.0.0.1:1', pid: 1, dataDir: '/d'})
    vi.mocked(api.agents.events).mockResolvedValue([])
    vi.mocked(api.hosts.use).mockClear()
  })

  it('lists the machines with their state; a host shown gets the calls, its projects under it, its agents from host:event only', async () => {
    vi.mocked(api.hosts.list).mockResolvedValue([box({state: 'unreachable', since: new Date(2026, 4, 1, 14, 2).toISOString()})])
    // Which machine answers follows UseHost, as the Go side does.
    let shown = ''
    vi.mocked(api.hosts.use).mockImplementation(async (h) => void (shown = h ?? ''))
    vi.mocked(api.projects.list).mockImplementation(async () => (shown === 'box' ? [onBox] : [local]))
    vi.mocked(api.agents.list).mockImplementation(async (p) =>
      (p === 'pb' ? [agent({id: 'far', projectId: 'pb', status: 'running'})] : [agent({id: 'near', projectId: 'p1', status: 'running'})]))
    renderApp()
    expect(await screen.findByText('near')).toBeInTheDocument()
    const machines = await screen.findByRole('list', {name: 'Machines'})
    const boxButton = within(machines).getByText('box').closest('button')!
    expect(boxButton.getAttribute('data-state')).toBe('unreachable')
    expect(within(boxButton).getByText('unreachable since 14:02')).toBeInTheDocument()
    expect(within(boxButton).getByText(/2 agents/)).toBeInTheDocument()

    // Back: its state is pushed.
    act(() => handlers.get('host:state')!(box()))
    await vi.waitFor(() => expect(boxButton.getAttribute('data-state')).toBe('connected'))
    await userEvent.click(boxButton)
    expect(api.hosts.use).toHaveBeenCalledWith('box')
    expect(await screen.findByText('far')).toBeInTheDocument()
    expect(screen.queryByText('near')).toBeNull()
    expect(screen.getByRole('heading', {name: 'Projects on box'})).toBeInTheDocument()
    // The shown host's project is listed under its entry.
    const boxItem = within(machines).getByText('box').closest('li')!
    expect(within(boxItem).getByText('remote-proj')).toBeInTheDocument()

    // A local agent's push does not touch the host's list; the host's own does.
    act(() => handlers.get('agent:state')!(agent({id: 'far', projectId: 'pb', status: 'failed', exitReason: 'failed', exitCode: 1})))
    expect(screen.getByText('running')).toBeInTheDocument()
    act(() => handlers.get('host:event')!({host: 'other', id: 9, event: 'agent:state',
      data: agent({id: 'far', projectId: 'pb', status: 'failed', exitReason: 'failed', exitCode: 1})}))
    expect(screen.getByText('running')).toBeInTheDocument()
    act(() => handlers.get('host:event')!({host: 'box', id: 10, event: 'agent:state',
      data: agent({id: 'far', projectId: 'pb', status: 'failed', exitReason: 'failed', exitCode: 1})}))
    expect(await screen.findByText('failed')).toBeInTheDocument()

    // Back to this computer.
    await userEvent.click(within(machines).getByText('This computer'))
    expect(api.hosts.use).toHaveBeenLastCalledWith(null)
    expect(await screen.findByText('near')).toBeInTheDocument()
  })

  it('a host back says what happened while it was away, and lists it agent by agent', async () => {
    vi.mocked(api.hosts.list).mockResolvedValue([box()])
    vi.mocked(api.projects.list).mockResolvedValue([local])
    vi.mocked(api.agents.list).mockResolvedValue([])
    renderApp()
    await screen.findByText(/No agents in this project yet/)
    const away = box({whileAway: {lost: '2026-05-01T14:02:00Z', back: '2026-05-01T14:09:00Z', engineRestarted: false, agents: [
      {projectId: 'pb', agentId: 'build', from: 'running', to: 'failed', ended: 1, exitCode: 3},
      {projectId: 'pb', agentId: 'ask', from: 'running', to: 'running', ended: 0, attention: 'waiting: permission for Bash'},
    ]}})
    vi.mocked(api.hosts.list).mockResolvedValue([away])
    act(() => handlers.get('host:away')!(away))
    expect(await screen.findByText('While box was away')).toBeInTheDocument()
    expect(screen.getByText('1 agent ended, 1 needs you')).toBeInTheDocument()
    act(() => screen.getByRole('button', {name: 'Show'}).click())
    const dialog = await screen.findByRole('dialog', {name: 'While box was away'})
    expect(within(dialog).getByText('ended, running → failed, exit code 3')).toBeInTheDocument()
    expect(within(dialog).getByText('running, needs you: waiting: permission for Bash')).toBeInTheDocument()
  })

  it('add a host: an unknown key is shown by its fingerprint and sent back only when accepted; a changed key is refused', async () => {
    vi.mocked(api.hosts.list).mockResolvedValue([])
    vi.mocked(api.projects.list).mockResolvedValue([local])
    vi.mocked(api.agents.list).mockResolvedValue([])
    renderApp()
    await screen.findByText(/No agents in this project yet/)
    await userEvent.click(screen.getByRole('button', {name: 'Add host…'}))
    const dialog = await screen.findByRole('dialog', {name: 'Add host'})
    await userEvent.type(within(dialog).getByRole('textbox', {name: 'Name'}), 'box')
    await userEvent.type(within(dialog).getByRole('textbox', {name: 'SSH address'}), 'ssh://me@10.0.0.2')
    vi.mocked(api.hosts.add).mockRejectedValueOnce(new ApiError('HostKeyUnknown',
      'the host key of 10.0.0.2 is not known: ssh-ed25519 SHA256:abcDEF123+/x. Compare this fingerprint', 409))
    await userEvent.click(within(dialog).getByRole('button', {name: 'Add host'}))
    expect(await within(dialog).findByText('SHA256:abcDEF123+/x')).toBeInTheDocument()
    expect(api.hosts.add).toHaveBeenLastCalledWith('box', 'ssh://me@10.0.0.2', '')
    vi.mocked(api.hosts.add).mockResolvedValueOnce(box())
    vi.mocked(api.hosts.list).mockResolvedValue([box()])
    await userEvent.click(within(dialog).getByRole('button', {name: 'Accept key and add'}))
    expect(api.hosts.add).toHaveBeenLastCalledWith('box', 'ssh://me@10.0.0.2', 'SHA256:abcDEF123+/x')
    await vi.waitFor(() => expect(screen.queryByRole('dialog', {name: 'Add host'})).toBeNull())
    expect(useUI.getState().host).toBe('box')

    act(() => useUI.getState().open({kind: 'addHost'}))
    const again = await screen.findByRole('dialog', {name: 'Add host'})
    await userEvent.type(within(again).getByRole('textbox', {name: 'Name'}), 'box2')
    await userEvent.type(within(again).getByRole('textbox', {name: 'SSH address'}), 'ssh://me@10.0.0.2')
    vi.mocked(api.hosts.add).mockRejectedValueOnce(new ApiError('HostKeyChanged', 'refused: the host key of 10.0.0.2 has changed', 409))
    await userEvent.click(within(again).getByRole('button', {name: 'Add host'}))
    expect(await within(again).findByRole('alert')).toHaveTextContent('has changed')
    expect(within(again).queryByRole('button', {name: 'Accept key and add'})).toBeNull()
  })
})
