import {fireEvent, render, screen} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api, type Settings} from '../../api'
import {useUI} from '../../state/ui'
import {SettingsDialog} from './SettingsDialog'

vi.mock('../../api', async (orig) => ({
  ...(await orig<typeof import('../../api')>()),
  api: {settings: {get: vi.fn(), put: vi.fn(), sandbox: vi.fn()}, projects: {list: vi.fn()}},
}))

// An older engine's answer: without the settings newer ones add.
const defaults = {watchdogIntervalSec: 30, staleCheckIntervalSec: 60, staleThresholdSec: 300, resultGraceSec: 5,
  autoResumeLimit: 3, pausedExpiryDays: 30, maxRunning: 0, notifyNative: true, notifyCompletion: false} as Settings

function renderDialog() {
  return render(<QueryClientProvider client={new QueryClient()}><SettingsDialog/></QueryClientProvider>)
}

describe('the log rotation settings', () => {
  beforeEach(() => {
    useUI.setState({projectId: 'p1', dialog: {kind: 'settings'}})
    vi.mocked(api.projects.list).mockResolvedValue([])
    vi.mocked(api.settings.put).mockReset().mockImplementation(async (_p, s) => s)
    vi.mocked(api.settings.sandbox).mockResolvedValue({os: 'linux', landlock: true, netns: true, seatbelt: false})
  })

  it('are explained with their defaults and saved', async () => {
    vi.mocked(api.settings.get).mockResolvedValue({...defaults, logMaxMiB: 10, logKeep: 5} as never)
    renderDialog()
    const size = await screen.findByLabelText(/Rotate an agent’s log at/)
    expect(size).toHaveValue('10')
    expect(screen.getByText(/cannot fill the disk/)).toHaveTextContent('Default: 10 MiB.')
    expect(screen.getByLabelText(/Rotated log files kept/)).toHaveValue('5')
    fireEvent.change(size, {target: {value: '2'}})
    fireEvent.change(screen.getByLabelText(/Rotated log files kept/), {target: {value: '0'}})
    fireEvent.click(screen.getByRole('button', {name: 'Save'}))
    await vi.waitFor(() => expect(api.settings.put).toHaveBeenCalledWith('p1', {...defaults, logMaxMiB: 2, logKeep: 0}))
  })

  it('are absent with an engine that has none', async () => {
    vi.mocked(api.settings.get).mockResolvedValue(defaults)
    renderDialog()
    await screen.findByLabelText(/Silent for this long/)
    expect(screen.queryByLabelText(/Rotate an agent’s log at/)).not.toBeInTheDocument()
  })
})
