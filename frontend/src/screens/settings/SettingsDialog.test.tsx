import {fireEvent, render, screen} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api} from '../../api'
import {useUI} from '../../state/ui'
import {SettingsDialog} from './SettingsDialog'

vi.mock('../../api', async (orig) => ({
  ...(await orig<typeof import('../../api')>()),
  api: {settings: {get: vi.fn(), put: vi.fn(), getPrefs: vi.fn(), putPrefs: vi.fn()}},
}))

const defaults = {watchdogIntervalSec: 30, staleCheckIntervalSec: 60, staleThresholdSec: 300, resultGraceSec: 5,
  autoResumeLimit: 3, pausedExpiryDays: 30, maxRunning: 0, notifyNative: true, notifyCompletion: false}

describe('SettingsDialog', () => {
  beforeEach(() => {
    useUI.setState({projectId: 'p1', dialog: {kind: 'settings'}})
    vi.mocked(api.settings.get).mockResolvedValue(defaults)
    vi.mocked(api.settings.put).mockImplementation(async (_p, s) => s)
    vi.mocked(api.settings.getPrefs).mockResolvedValue({stopAgentsOnQuit: false})
    vi.mocked(api.settings.putPrefs).mockImplementation(async (p) => p)
  })

  it('saves the project settings, the notification toggles and stop-on-quit', async () => {
    render(<QueryClientProvider client={new QueryClient()}><SettingsDialog/></QueryClientProvider>)
    const limit = await screen.findByLabelText('Auto-resume limit')
    fireEvent.change(limit, {target: {value: '5'}})
    fireEvent.click(screen.getByLabelText(/Also notify when an agent completes/))
    fireEvent.click(screen.getByLabelText(/Stop all agents when Shepherd quits/))
    fireEvent.click(screen.getByRole('button', {name: 'Save'}))
    await vi.waitFor(() => expect(api.settings.putPrefs).toHaveBeenCalledWith({stopAgentsOnQuit: true}))
    expect(api.settings.put).toHaveBeenCalledWith('p1', {...defaults, autoResumeLimit: 5, notifyCompletion: true})
    expect(useUI.getState().dialog).toBeNull()
  })
})
