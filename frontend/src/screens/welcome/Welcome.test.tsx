import {render, screen} from '@testing-library/react'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {getEngine, getVersion} from '../../api'
import {Welcome} from './Welcome'

vi.mock('../../api', () => ({getVersion: vi.fn(), getEngine: vi.fn()}))

const mockedGetVersion = vi.mocked(getVersion)
const mockedGetEngine = vi.mocked(getEngine)

describe('Welcome', () => {
  beforeEach(() => {
    mockedGetVersion.mockReset()
    mockedGetEngine.mockReset()
    mockedGetEngine.mockResolvedValue({url: 'http://127.0.0.1:4242', pid: 77, dataDir: '/d'})
  })

  it('says what Shepherd is and shows the version from Go', async () => {
    mockedGetVersion.mockResolvedValue('1.2.3')
    render(<Welcome/>)

    expect(screen.getByRole('heading', {name: 'Shepherd'})).toBeInTheDocument()
    expect(screen.getByText(/supervises long-running AI coding agents/)).toBeInTheDocument()
    expect(await screen.findByText('Version 1.2.3')).toBeInTheDocument()
    expect(mockedGetVersion).toHaveBeenCalledTimes(1)
  })

  it('shows where the embedded engine listens', async () => {
    mockedGetVersion.mockResolvedValue('1.2.3')
    render(<Welcome/>)

    expect(await screen.findByText(/Engine running \(pid 77\) at http:\/\/127\.0\.0\.1:4242/)).toBeInTheDocument()
  })

  it('says why the engine is not running', async () => {
    mockedGetVersion.mockResolvedValue('1.2.3')
    mockedGetEngine.mockRejectedValue('the engine did not start: another Shepherd engine is already running')
    render(<Welcome/>)

    expect(await screen.findByText(/Engine not running: the engine did not start: another Shepherd engine/)).toBeInTheDocument()
  })

  it('says the version is unknown when the call fails', async () => {
    mockedGetVersion.mockRejectedValue(new Error('no backend'))
    render(<Welcome/>)

    expect(await screen.findByText('Version unknown')).toBeInTheDocument()
  })
})
