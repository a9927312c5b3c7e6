import {fireEvent, render, screen} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {describe, expect, it, vi} from 'vitest'
import {api} from '../../api'
import {WebhooksSection} from './WebhooksSection'

vi.mock('../../api', async (orig) => ({
  ...(await orig<typeof import('../../api')>()),
  api: {webhooks: {list: vi.fn(), add: vi.fn(), remove: vi.fn(), test: vi.fn()}},
}))

const wrap = (ui: React.ReactNode) => render(<QueryClientProvider client={new QueryClient()}>{ui}</QueryClientProvider>)

describe('WebhooksSection', () => {
  it('lists the channels masked, tests, adds and removes one', async () => {
    vi.mocked(api.webhooks.list).mockResolvedValue([{id: 'w1', name: 'phone', format: 'ntfy', url: 'https://ntfy.sh/***', kinds: ['failed'],
      status: {sent: 2, failing: false}}] as never)
    vi.mocked(api.webhooks.test).mockResolvedValue([{id: 'w1', name: 'phone', ok: false, error: 'HTTP 500'}] as never)
    vi.mocked(api.webhooks.add).mockResolvedValue({name: 'team'} as never)
    vi.mocked(api.webhooks.remove).mockResolvedValue(undefined)
    wrap(<WebhooksSection/>)
    expect(await screen.findByText('https://ntfy.sh/***')).toBeInTheDocument()
    expect(screen.getByText('2 sent')).toBeInTheDocument()
    fireEvent.click(screen.getByRole('button', {name: 'Test'}))
    expect(await screen.findByText('phone: HTTP 500')).toBeInTheDocument()
    fireEvent.change(screen.getByLabelText('Channel name'), {target: {value: 'team'}})
    fireEvent.change(screen.getByLabelText('Channel URL'), {target: {value: 'https://hooks.example/x'}})
    fireEvent.change(screen.getByLabelText('Channel format'), {target: {value: 'slack'}})
    fireEvent.click(screen.getByRole('button', {name: 'Add'}))
    await vi.waitFor(() => expect(api.webhooks.add).toHaveBeenCalledWith({name: 'team', url: 'https://hooks.example/x', format: 'slack'}))
    expect(await screen.findByText('Added team.')).toBeInTheDocument()
    fireEvent.click(screen.getByRole('button', {name: 'Remove phone'}))
    await vi.waitFor(() => expect(api.webhooks.remove).toHaveBeenCalledWith('w1'))
  })
})
