import {fireEvent, render, screen} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api, type Project} from '../../api'
import {agent, project as fixture} from '../../test/fixtures'
import {AgentForm} from './AgentForm'
import {AgentRow} from './AgentRow'
import {ProjectSummary} from './ProjectSummary'

vi.mock('../../api', async (orig) => ({
  ...(await orig<typeof import('../../api')>()),
  api: {
    agents: {create: vi.fn(), update: vi.fn(), lookPath: vi.fn()}, projects: {pickFolder: vi.fn(), list: vi.fn()},
    settings: {sandbox: vi.fn()}, mcpConfig: vi.fn(),
  },
}))

const wrap = (ui: React.ReactNode) =>
  render(<QueryClientProvider client={new QueryClient({defaultOptions: {queries: {retry: false}}})}>{ui}</QueryClientProvider>)
const input = (name: string) => document.querySelector<HTMLInputElement>(`[name="${name}"]`)!
const type = (name: string, value: string) => fireEvent.change(input(name), {target: {value}})

describe('the agent form’s budget', () => {
  beforeEach(() => {
    vi.mocked(api.agents.lookPath).mockReset().mockResolvedValue('/usr/bin/claude')
    vi.mocked(api.settings.sandbox).mockReset().mockResolvedValue({os: 'linux', landlock: true, netns: true, seatbelt: false})
    vi.mocked(api.mcpConfig).mockReset().mockResolvedValue('')
    vi.mocked(api.agents.create).mockReset().mockImplementation(async (_p, s) => agent({id: s.id}))
  })

  it('sends the limits and says which flags Claude Code gets', async () => {
    const onDone = vi.fn()
    wrap(<AgentForm projectId="p1" projectPath="/src/app" onDone={onDone} onCancel={vi.fn()}/>)
    fireEvent.click(screen.getByRole('button', {name: 'Claude Code'}))
    type('id', 'fixer')
    type('prompt', 'fix it')
    type('maxBudgetUsd', '$2.50')
    type('maxTurns', '40')
    expect(document.querySelector('[data-budget-hint]')).toHaveTextContent('--max-budget-usd 2.5 --max-turns 40 added (not stored in its arguments)')
    fireEvent.click(screen.getByRole('button', {name: 'Create agent'}))
    await vi.waitFor(() => expect(onDone).toHaveBeenCalled())
    const spec = vi.mocked(api.agents.create).mock.calls[0][1]
    expect(spec).toMatchObject({maxBudgetUsd: 2.5, maxTurns: 40})
    expect(spec.args).not.toContain('--max-budget-usd')
  })

  it('refuses a budget that is not an amount, at its field, and shows the engine’s word there', async () => {
    wrap(<AgentForm projectId="p1" projectPath="/src/app" onDone={vi.fn()} onCancel={vi.fn()}/>)
    type('id', 'x')
    type('command', 'make')
    type('maxTurns', 'many')
    fireEvent.click(screen.getByRole('button', {name: 'Create agent'}))
    expect(await screen.findByText(/maxTurns: a whole number of turns/)).toBeInTheDocument()
    expect(input('maxTurns')).toHaveAttribute('aria-invalid', 'true')
    expect(api.agents.create).not.toHaveBeenCalled()
    type('maxTurns', '')
    vi.mocked(api.agents.create).mockImplementation(() => {
      const p = Promise.reject("agent 'x': maxBudgetUsd must be 0 (none) or an amount of dollars up to 1000000, not 2e+06")
      p.catch(() => {})
      return p
    })
    type('maxBudgetUsd', '2000000')
    fireEvent.click(screen.getByRole('button', {name: 'Create agent'}))
    expect(await screen.findByText(/maxBudgetUsd must be 0/)).toBeInTheDocument()
    expect(input('maxBudgetUsd')).toHaveAttribute('aria-invalid', 'true')
  })

  it('fills the limits when editing', () => {
    wrap(<AgentForm projectId="p1" projectPath="/src/app" onDone={vi.fn()} onCancel={vi.fn()}
      editing={agent({id: 'e', maxBudgetUsd: 5, maxTurns: 12})}/>)
    expect(input('maxBudgetUsd')).toHaveValue('5')
    expect(input('maxTurns')).toHaveValue('12')
  })
})

describe('the row and the header', () => {
  it("shows a run's spend against its budget, and a budget reached", () => {
    const a = agent({id: 'fixer', status: 'paused', budgetPause: 'run', maxBudgetUsd: 5, lastResult: {costUsd: 5.12},
      pauseNote: 'budget: $5.00 per run reached ($5.12)'})
    wrap(<table><tbody><AgentRow agent={a} now={Date.now()} selected={false} cursor={false} onSelect={vi.fn()}/></tbody></table>)
    const cost = document.querySelector('[data-spend]')!
    expect(cost).toHaveTextContent('$5.12 / $5.00')
    expect(cost).toHaveClass('over')
    expect(cost.getAttribute('title')).toContain('Budget: $5.00 per run')
    expect(screen.getByText('budget reached')).toBeInTheDocument()
  })

  it("shows today's cost against the daily budget, and when it is reached", () => {
    const p: Project = fixture({name: 'demo', path: '/d', agents: 1, costToday: 3.2, dailyBudgetUsd: 20})
    const {rerender} = render(<ProjectSummary project={p} agents={[]} attention={0} costs={false}/>)
    expect(document.querySelector('[data-cost-today]')).toHaveTextContent('$3.20 of $20.00 today')
    rerender(<ProjectSummary project={{...p, costToday: 20.4, budgetHeld: true}} agents={[]} attention={0} costs={false}/>)
    const today = document.querySelector('[data-cost-today]')!
    expect(today).toHaveTextContent('daily budget reached · $20.40 of $20.00')
    expect(today).toHaveClass('over')
  })
})
