import {fireEvent, render, screen} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api, type Settings} from '../../api'
import {project} from '../../test/fixtures'
import {useUI} from '../../state/ui'
import {PrefsDialog, SettingsDialog} from './SettingsDialog'

vi.mock('../../api', async (orig) => ({
  ...(await orig<typeof import('../../api')>()),
  api: {settings: {get: vi.fn(), put: vi.fn(), getPrefs: vi.fn(), putPrefs: vi.fn(), sandbox: vi.fn()}, projects: {list: vi.fn()},
    webhooks: {list: vi.fn(async () => [])}},
}))

// An older engine's answer: without the settings newer ones add.
const defaults = {watchdogIntervalSec: 30, staleCheckIntervalSec: 60, staleThresholdSec: 300, resultGraceSec: 5,
  autoResumeLimit: 3, pausedExpiryDays: 30, maxRunning: 0, notifyNative: true, notifyCompletion: false} as Settings

const wrap = (ui: React.ReactNode) => render(<QueryClientProvider client={new QueryClient()}>{ui}</QueryClientProvider>)

describe('SettingsDialog', () => {
  beforeEach(() => {
    useUI.setState({projectId: 'p1', dialog: {kind: 'settings'}})
    vi.mocked(api.projects.list).mockResolvedValue([project({path: '/d'})])
    vi.mocked(api.settings.get).mockResolvedValue(defaults)
    vi.mocked(api.settings.put).mockImplementation(async (_p, s) => s)
    vi.mocked(api.settings.getPrefs).mockResolvedValue({stopAgentsOnQuit: false, startAtLogin: false})
    vi.mocked(api.settings.putPrefs).mockImplementation(async (p) => p)
    vi.mocked(api.settings.sandbox).mockResolvedValue({os: 'linux', landlock: true, landlockAbi: 6, netns: true, seatbelt: false})
  })

  it('explains each setting in plain words with its default, and saves', async () => {
    wrap(<SettingsDialog/>)
    const limit = await screen.findByLabelText(/Automatic resumes before giving up/)
    expect(screen.getByText(/Resuming it yourself resets the count\. Default: 3\./)).toBeInTheDocument()
    expect(screen.getByText(/Default: 300 s\./)).toBeInTheDocument()
    // The silence check covers every agent, not only Claude and Codex.
    expect(screen.getByText(/Default: 300 s\./)).toHaveTextContent(/Every agent is watched, whatever its command.*any other command is flagged in Needs you and left running/)
    expect(screen.queryByLabelText(/Stop all agents when Shepherd quits/)).toBeNull()
    fireEvent.change(limit, {target: {value: '5'}})
    fireEvent.click(screen.getByLabelText(/Also notify when an agent completes/))
    fireEvent.click(screen.getByRole('button', {name: 'Save'}))
    await vi.waitFor(() => expect(api.settings.put).toHaveBeenCalledWith('p1', {...defaults, autoResumeLimit: 5, notifyCompletion: true}))
    expect(api.settings.putPrefs).not.toHaveBeenCalled()
    await vi.waitFor(() => expect(useUI.getState().dialog).toBeNull())
  })

  it('turns the wait for a usage limit off, where the engine has it', async () => {
    vi.mocked(api.settings.get).mockResolvedValue({...defaults, usageLimitWait: true})
    wrap(<SettingsDialog/>)
    const wait = await screen.findByLabelText(/usage limit waits for the reset and resumes/)
    expect(wait).toBeChecked()
    fireEvent.click(wait)
    fireEvent.click(screen.getByRole('button', {name: 'Save'}))
    await vi.waitFor(() => expect(api.settings.put).toHaveBeenCalledWith('p1', {...defaults, usageLimitWait: false}))
  })

  it('keeps the app-wide preference in its own dialog', async () => {
    useUI.setState({dialog: {kind: 'prefs'}})
    wrap(<PrefsDialog/>)
    fireEvent.click(await screen.findByLabelText(/Stop all agents when Shepherd quits/))
    fireEvent.click(screen.getByRole('button', {name: 'Save'}))
    await vi.waitFor(() => expect(api.settings.putPrefs).toHaveBeenCalledWith({stopAgentsOnQuit: true, startAtLogin: false}))
    expect(useUI.getState().dialog).toBeNull()
  })
  it('says what of the sandbox this machine enforces, and what it lacks', async () => {
    const {unmount} = wrap(<SettingsDialog/>)
    expect((await screen.findByText(/Sandbox on this machine/)).closest('p')).toHaveTextContent(
      'Sandbox on this machine: Landlock (ABI 6) limits writes; network namespaces take the network away.')
    unmount()
    vi.mocked(api.settings.sandbox).mockResolvedValue({os: 'linux', landlock: false, landlockError: 'the kernel has no Landlock', netns: true, seatbelt: false})
    wrap(<SettingsDialog/>)
    const line = (await screen.findByText(/Sandbox on this machine/)).closest('p')
    expect(line).toHaveTextContent('no Landlock (the kernel has no Landlock)')
    expect(line).toHaveTextContent('Sandboxed agents that need what is missing do not start.')
    expect(line).toHaveClass('field-warn')
  })
})
