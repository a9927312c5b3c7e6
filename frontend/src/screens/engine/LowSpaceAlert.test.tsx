import {act, render, screen} from '@testing-library/react'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {getEngine, onEvent} from '../../api'
import {LowSpaceAlert} from './LowSpaceAlert'

const handlers = new Map<string, (data: unknown) => void>()

vi.mock('../../api', async (orig) => ({
  ...(await orig<typeof import('../../api')>()),
  getEngine: vi.fn(),
  onEvent: vi.fn((name: string, h: (data: unknown) => void) => {
    handlers.set(name, h)
    return () => handlers.delete(name)
  }),
}))

const low = {kind: 'low-space', message: 'The disk of Shepherd’s data folder is nearly full', path: '/home/me/.local/share/shepherd',
  freeBytes: 100 * 2 ** 20, totalBytes: 50 * 2 ** 30, since: '2025-01-01T00:00:00Z'}

describe('LowSpaceAlert', () => {
  beforeEach(() => {
    handlers.clear()
    vi.mocked(onEvent).mockClear()
  })

  it('shows the engine’s low-space alert, and goes when it is cleared', async () => {
    vi.mocked(getEngine).mockResolvedValue({state: 'embedded', url: '', pid: 1, dataDir: '', alerts: [low]})
    render(<LowSpaceAlert/>)
    const alert = await screen.findByRole('alert', {name: 'Disk nearly full'})
    expect(alert).toHaveTextContent('100.0 MiB free of 50.0 GiB on the disk of /home/me/.local/share/shepherd')
    act(() => handlers.get('engine:alerts')!([]))
    expect(screen.queryByRole('alert')).not.toBeInTheDocument()
  })

  it('is absent without alerts, and appears when one is pushed', async () => {
    vi.mocked(getEngine).mockResolvedValue({state: 'embedded', url: '', pid: 1, dataDir: ''})
    const {container} = render(<LowSpaceAlert/>)
    await vi.waitFor(() => expect(getEngine).toHaveBeenCalled())
    expect(container).toBeEmptyDOMElement()
    act(() => handlers.get('engine:alerts')!([low]))
    expect(screen.getByRole('alert', {name: 'Disk nearly full'})).toBeInTheDocument()
  })
})
