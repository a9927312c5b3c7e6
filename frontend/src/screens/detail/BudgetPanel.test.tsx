import {fireEvent, render, screen} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api} from '../../api'
import {agent, figures, project} from '../../test/fixtures'
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
    vi.mocked(api.projects.list).mockResolvedValue([project({path: '/d', agents: 1, dailyBudgetUsd: 20})])
  })

  it('asks the answers of a budget pause', async () => {
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
    await vi.waitFor(() => expect(screen.getByRole('button', {name: 'Remove the limit'})).toBeEnabled())
    fireEvent.click(screen.getByRole('button', {name: 'Remove the limit'}))
    await vi.waitFor(() => expect(api.agents.answerBudget).toHaveBeenCalledWith('p1', 'fixer', 'remove', 0))
  })

  it('never raises to 0, to nothing, or to less than what was reached; a sub-cent limit is raised in sub-cents', async () => {
    const tiny = {...paused, maxBudgetUsd: 0.0002, lastResult: figures({costUsd: 0.0003}), pauseNote: 'budget: $0.0002 per run reached ($0.0003)'}
    wrap(<BudgetPanel agent={tiny}/>)
    const limit = screen.getByLabelText(/Raise dollars per run to/)
    expect(limit).toHaveValue('0.0006') // double what the run reached, not $0.00
    const raise = screen.getByRole('button', {name: 'Raise and resume'})
    expect(raise).toBeEnabled()
    expect(screen.getByText('Above $0.0003, what was reached.')).toBeInTheDocument()
    for (const bad of ['0', '', '0.0003', '0.0001', 'abc']) {
      fireEvent.change(limit, {target: {value: bad}})
      expect(raise).toBeDisabled()
      expect(limit).toHaveAttribute('aria-invalid', 'true')
    }
    expect(screen.getByText(/must be an amount of dollars/)).toBeInTheDocument()
    fireEvent.change(limit, {target: {value: '0.0001'}})
    expect(screen.getByText('The new limit must be above $0.0003, what was reached.')).toBeInTheDocument()
    fireEvent.keyDown(limit, {key: 'Enter'})
    expect(api.agents.answerBudget).not.toHaveBeenCalled()
    fireEvent.change(limit, {target: {value: '0.0004'}})
    fireEvent.click(raise)
    await vi.waitFor(() => expect(api.agents.answerBudget).toHaveBeenCalledWith('p1', 'fixer', 'raise', 0.0004))
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
