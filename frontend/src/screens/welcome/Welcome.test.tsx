import {render, screen} from '@testing-library/react'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {getVersion} from '../../api'
import {Welcome} from './Welcome'

vi.mock('../../api', () => ({getVersion: vi.fn()}))

const mockedGetVersion = vi.mocked(getVersion)

describe('Welcome', () => {
  beforeEach(() => {
    mockedGetVersion.mockReset()
  })

  it('says what Shepherd is and shows the version from Go', async () => {
    mockedGetVersion.mockResolvedValue('1.2.3')
    render(<Welcome/>)

    expect(screen.getByRole('heading', {name: 'Shepherd'})).toBeInTheDocument()
    expect(screen.getByText(/supervises long-running AI coding agents/)).toBeInTheDocument()
    expect(screen.getByText('The agents view comes next.')).toBeInTheDocument()
    expect(await screen.findByText('Version 1.2.3')).toBeInTheDocument()
    expect(mockedGetVersion).toHaveBeenCalledTimes(1)
  })

  it('says the version is unknown when the call fails', async () => {
    mockedGetVersion.mockRejectedValue(new Error('no backend'))
    render(<Welcome/>)

    expect(await screen.findByText('Version unknown')).toBeInTheDocument()
  })
})
