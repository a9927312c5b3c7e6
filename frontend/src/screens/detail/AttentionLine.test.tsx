import {fireEvent, render, screen} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {describe, expect, it, vi} from 'vitest'
import {api, type Agent} from '../../api'
import {agent, at} from '../../test/fixtures'
import {AttentionLine} from './AttentionLine'

vi.mock('../../api', async (orig) => ({...(await orig<typeof import('../../api')>()), api: {agents: {ack: vi.fn()}}}))

const show = (a: Agent, error?: string) =>
  render(<QueryClientProvider client={new QueryClient()}><AttentionLine agent={a} error={error}/></QueryClientProvider>)

describe('AttentionLine', () => {
  it('says what the agent needs, with its start error, and acknowledges it', () => {
    const a = agent({id: 'x', status: 'not_started', error: 'sandbox unavailable: no Landlock'})
    vi.mocked(api.agents.ack).mockResolvedValue({...a, acknowledgedAt: at(0)})
    show(a, a.error!)
    expect(screen.getByRole('alert')).toHaveTextContent('Needs you: could not start — sandbox unavailable: no Landlock')
    fireEvent.click(screen.getByRole('button', {name: 'Acknowledge'}))
    expect(api.agents.ack).toHaveBeenCalledWith('p1', 'x')
  })

  it('a rate limit is said calmly; a budget pause is left to its own panel; an agent that needs nothing, nothing', () => {
    const {container, unmount} = show(agent({status: 'running', activity: {state: 'waiting', waiting: 'rate limit', needsYou: false, until: at(-120)}}))
    expect(container).toHaveTextContent(/^waiting: rate limit until .*not hung: it goes on by itself$/)
    expect(container.querySelector('.calm')).not.toBeNull()
    unmount()
    expect(show(agent({status: 'paused', budgetPause: 'run', pausedAt: at(5)})).container).toBeEmptyDOMElement()
    expect(show(agent({status: 'completed'})).container).toBeEmptyDOMElement()
  })
})
