import {fireEvent, render, screen} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api} from '../../api'
import {agent} from '../../test/fixtures'
import {BudgetPanel} from './BudgetPanel'

vi.mock('../../api', async (orig) => ({
  ...(await orig<typeof import('../../api')>()),
  api: {agents: {answerBudget: vi.fn()}, projects: {list: vi.fn()}},
}))

const wrap = (ui: React.ReactNode) => render(<QueryClientProvider client={new QueryClient()}>{ui}</QueryClientProvider>)
const paused = agent({id: 'fixer', projectId: 'p1', status: 'paused', budgetPause: 'run', maxBudgetUsd: 5,
  pauseNote: 'budget: $5.00 per run reached ($5.12)'})

describe('BudgetPanel', () => {
  beforeEach(() => {
    vi.mocked(api.agents.answerBudget).mockReset().mockResolvedValue(paused)
    vi.mocked(api.projects.list).mockResolvedValue([{id: 'p1', name: 'demo', path: '/d', createdAt: '', loaded: true,
      agents: 1, running: 0, attention: 0, dailyBudgetUsd: 20}])
  })

  it('asks the three answers of a budget pause', async () => {
    wrap(<BudgetPanel agent={paused}/>)
    expect(screen.getByRole('alert', {name: 'Budget reached'})).toHaveTextContent('budget: $5.00 per run reached ($5.12)')
    expect(screen.getByText(/Its budget: \$5\.00 per run/)).toBeInTheDocument()
    const limit = screen.getByLabelText(/Raise dollars per run to/)
    expect(limit).toHaveValue('10')
    fireEvent.change(limit, {target: {value: '7.5'}})
    fireEvent.click(screen.getByRole('button', {name: 'Raise and resume'}))
    await vi.waitFor(() => expect(api.agents.answerBudget).toHaveBeenCalledWith('p1', 'fixer', 'raise', 7.5))
    await vi.waitFor(() => expect(screen.getByRole('button', {name: 'Resume once'})).toBeEnabled())
    fireEvent.click(screen.getByRole('button', {name: 'Resume once'}))
    await vi.waitFor(() => expect(api.agents.answerBudget).toHaveBeenCalledWith('p1', 'fixer', 'once', 0))
    await vi.waitFor(() => expect(screen.getByRole('button', {name: 'Stop'})).toBeEnabled())
    fireEvent.click(screen.getByRole('button', {name: 'Stop'}))
    await vi.waitFor(() => expect(api.agents.answerBudget).toHaveBeenCalledWith('p1', 'fixer', 'stop', 0))
  })

  it("raises the project's daily budget for a daily pause", async () => {
    wrap(<BudgetPanel agent={{...paused, budgetPause: 'daily', pauseNote: 'daily budget $20.00 reached ($20.40 today)'}}/>)
    const limit = await screen.findByDisplayValue('40')
    expect(screen.getByLabelText(/Raise the project's daily budget to/)).toBe(limit)
  })

  it('is not shown for a plain pause', () => {
    const {container} = wrap(<BudgetPanel agent={{...paused, budgetPause: undefined}}/>)
    expect(container).toBeEmptyDOMElement()
  })
})
