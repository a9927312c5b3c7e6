import {fireEvent, render, screen} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api, type Settings} from '../../api'
import {useUI} from '../../state/ui'
import {SettingsDialog} from './SettingsDialog'
import {limitsText} from './BoxLimitsFields'

vi.mock('../../api', async (orig) => ({
  ...(await orig<typeof import('../../api')>()),
  api: {settings: {get: vi.fn(), put: vi.fn(), sandbox: vi.fn()}, projects: {list: vi.fn()}},
}))

// An older engine's answer: without the settings newer ones add.
const defaults = {watchdogIntervalSec: 30, staleCheckIntervalSec: 60, staleThresholdSec: 300, resultGraceSec: 5,
  autoResumeLimit: 3, pausedExpiryDays: 30, maxRunning: 0, notifyNative: true, notifyCompletion: false, dailyBudgetUsd: 0,
  boxMaxProcesses: 4096, boxMemoryMiB: 12000, boxShmMiB: 1024} as Settings

const renderDialog = () => render(<QueryClientProvider client={new QueryClient()}><SettingsDialog/></QueryClientProvider>)

describe('the sandboxed agents’ limits', () => {
  beforeEach(() => {
    useUI.setState({projectId: 'p1', dialog: {kind: 'settings'}})
    vi.mocked(api.projects.list).mockResolvedValue([])
    vi.mocked(api.settings.get).mockResolvedValue(defaults)
    vi.mocked(api.settings.put).mockReset().mockImplementation(async (_p, s) => s)
    vi.mocked(api.settings.sandbox).mockResolvedValue({os: 'linux', landlock: true, netns: true, seatbelt: false,
      limits: 'rlimit', pidLimit: true} as never)
  })

  it('are explained with their defaults and how this machine enforces them, and saved', async () => {
    renderDialog()
    const procs = await screen.findByLabelText(/Processes per sandboxed agent/)
    expect(procs).toHaveValue('4096')
    expect(screen.getByLabelText(/Memory per sandboxed agent/)).toHaveValue('12000')
    expect(screen.getByText(/a fork bomb stops there/)).toHaveTextContent('Default: 4096.')
    expect(screen.getByText(/also its TMPDIR/)).toHaveTextContent('Default: 1024 MiB.')
    expect(await screen.findByText(/memory is counted per process/)).toBeInTheDocument()
    fireEvent.change(procs, {target: {value: '512'}})
    fireEvent.change(screen.getByLabelText(/Scratch space/), {target: {value: '0'}})
    fireEvent.click(screen.getByRole('button', {name: 'Save'}))
    await vi.waitFor(() => expect(api.settings.put).toHaveBeenCalledWith('p1', {...defaults, boxMaxProcesses: 512, boxShmMiB: 0}))
  })

  it('are not offered by an engine that has none', async () => {
    const {boxMaxProcesses: _p, boxMemoryMiB: _m, boxShmMiB: _s, ...old} = defaults
    vi.mocked(api.settings.get).mockResolvedValue(old as Settings) // an older engine's, without them
    renderDialog()
    await screen.findByLabelText(/Daily budget/)
    expect(screen.queryByLabelText(/Processes per sandboxed agent/)).toBeNull()
  })

  it('say which mechanism applies', () => {
    const base = {os: 'linux', landlock: true, netns: true, seatbelt: false}
    expect(limitsText({...base, limits: 'cgroup'})).toMatch(/cgroup of each sandboxed agent’s own/)
    expect(limitsText({...base, limits: 'rlimit'})).toMatch(/not limited for agents running as root/)
    expect(limitsText({...base, os: 'darwin'})).toBe('macOS enforces none of these limits.')
  })
})
