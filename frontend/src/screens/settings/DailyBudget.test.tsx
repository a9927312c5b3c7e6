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
  autoResumeLimit: 3, pausedExpiryDays: 30, maxRunning: 0, notifyNative: true, notifyCompletion: false, dailyBudgetUsd: 0} as Settings

describe('the daily budget setting', () => {
  beforeEach(() => {
    useUI.setState({projectId: 'p1', dialog: {kind: 'settings'}})
    vi.mocked(api.projects.list).mockResolvedValue([])
    vi.mocked(api.settings.get).mockResolvedValue(defaults)
    vi.mocked(api.settings.put).mockReset().mockImplementation(async (_p, s) => s)
    vi.mocked(api.settings.sandbox).mockResolvedValue({os: 'linux', landlock: true, netns: true, seatbelt: false})
  })

  it('is explained and saved in dollars, cents included', async () => {
    render(<QueryClientProvider client={new QueryClient()}><SettingsDialog/></QueryClientProvider>)
    const field = await screen.findByLabelText(/Daily budget/)
    expect(field).toHaveAttribute('placeholder', 'no limit')
    expect(screen.getByText(/every running agent is paused at a safe point/)).toBeInTheDocument()
    fireEvent.change(field, {target: {value: '7.'}})
    expect(field).toHaveValue('7.')
    fireEvent.change(field, {target: {value: '7.50'}})
    fireEvent.click(screen.getByRole('button', {name: 'Save'}))
    await vi.waitFor(() => expect(api.settings.put).toHaveBeenCalledWith('p1', {...defaults, dailyBudgetUsd: 7.5}))
  })

  it('says what is wrong with a value that is not an amount', async () => {
    render(<QueryClientProvider client={new QueryClient()}><SettingsDialog/></QueryClientProvider>)
    const field = await screen.findByLabelText(/Daily budget/)
    fireEvent.change(field, {target: {value: 'lots'}})
    expect(screen.getByRole('alert')).toHaveTextContent('an amount of dollars')
  })
})
