import {fireEvent, render, screen} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import type {Asked} from '../../api'
import {api} from '../../api'
import {agent} from '../../test/fixtures'
import {QuestionPanel, RulesPanel} from './QuestionPanel'

vi.mock('../../api', async (orig) => ({
  ...(await orig<typeof import('../../api')>()),
  api: {agents: {questions: vi.fn(), answer: vi.fn(), rules: vi.fn(), removeRule: vi.fn(), addRule: vi.fn(), setAnswerPolicy: vi.fn()}},
}))

const wrap = (ui: React.ReactNode) => render(<QueryClientProvider client={new QueryClient()}>{ui}</QueryClientProvider>)
const waiting = (what: string) => agent({id: 'worker', projectId: 'p1', status: 'running', profile: 'claude-stream-json',
  activity: {state: 'waiting', waiting: what, needsYou: true} as never, attention: `waiting: ${what}`})

const permission: Asked = {id: 'q1', agentId: 'worker', projectId: 'p1', askedAt: '2026-11-26T12:00:00Z', position: 1, tool: 'Bash',
  summary: 'Bash: rm -rf build', input: {command: 'rm -rf build', description: 'Remove the build folder'},
  suggestions: ['Bash(rm -rf build)', 'Bash(rm:*)']}
const choice: Asked = {...permission, id: 'q2', tool: 'AskUserQuestion', summary: 'your choice', suggestions: [], questions: [
  {question: 'Which database?', options: [{label: 'Postgres', description: 'A server'}, {label: 'SQLite'}]}]}

describe('QuestionPanel', () => {
  beforeEach(() => {
    vi.mocked(api.agents.answer).mockReset().mockResolvedValue({} as never)
  })

  it('allows once, always with the suggested rule (editable), or denies with a message', async () => {
    vi.mocked(api.agents.questions).mockResolvedValue([permission])
    wrap(<QuestionPanel agent={waiting('permission for Bash: rm -rf build')}/>)
    const panel = await screen.findByRole('alert', {name: 'Permission asked'})
    expect(panel).toHaveTextContent('worker asks permission for Bash: rm -rf build')
    expect(panel).toHaveTextContent('Remove the build folder')
    const rule = screen.getByLabelText('Rule to keep')
    expect(rule).toHaveValue('Bash(rm -rf build)')
    fireEvent.click(screen.getByRole('button', {name: 'Allow once'}))
    await vi.waitFor(() => expect(api.agents.answer).toHaveBeenCalledWith('p1', 'worker', {questionId: 'q1', action: 'allow'}))
    fireEvent.change(rule, {target: {value: 'Bash(rm:*'}})
    expect(screen.getByRole('button', {name: 'Always allow'})).toBeDisabled()
    fireEvent.change(rule, {target: {value: 'Bash(rm:*)'}})
    fireEvent.change(screen.getByLabelText('Keep the rule for'), {target: {value: 'project'}})
    await vi.waitFor(() => expect(screen.getByRole('button', {name: 'Always allow'})).toBeEnabled())
    fireEvent.click(screen.getByRole('button', {name: 'Always allow'}))
    await vi.waitFor(() => expect(api.agents.answer).toHaveBeenCalledWith('p1', 'worker',
      {questionId: 'q1', action: 'always', rule: 'Bash(rm:*)', scope: 'project'}))
    await vi.waitFor(() => expect(screen.getByRole('button', {name: 'Deny'})).toBeEnabled())
    fireEvent.change(screen.getByLabelText('Message with a deny'), {target: {value: 'not the build'}})
    fireEvent.click(screen.getByRole('button', {name: 'Deny'}))
    await vi.waitFor(() => expect(api.agents.answer).toHaveBeenCalledWith('p1', 'worker',
      {questionId: 'q1', action: 'deny', message: 'not the build'}))
  })

  it('answers a choice with a click, once every question has one', async () => {
    vi.mocked(api.agents.questions).mockResolvedValue([choice])
    wrap(<QuestionPanel agent={waiting('your choice')}/>)
    await screen.findByRole('alert', {name: 'Question asked'})
    const send = screen.getByRole('button', {name: 'Answer'})
    expect(send).toBeDisabled()
    fireEvent.click(screen.getByRole('button', {name: /SQLite/}))
    expect(screen.getByRole('button', {name: /SQLite/})).toHaveAttribute('aria-pressed', 'true')
    fireEvent.click(send)
    await vi.waitFor(() => expect(api.agents.answer).toHaveBeenCalledWith('p1', 'worker',
      {questionId: 'q2', action: 'answer', answers: {'Which database?': 'SQLite'}, free: false}))
  })

  it('shows nothing when the agent asks nothing', () => {
    vi.mocked(api.agents.questions).mockReset().mockResolvedValue([permission])
    const {container} = wrap(<QuestionPanel agent={waiting('input')}/>)
    expect(container).toBeEmptyDOMElement()
    expect(api.agents.questions).not.toHaveBeenCalled()
  })
})

describe('RulesPanel', () => {
  it('lists the rules, removes one, and sets the policy', async () => {
    vi.mocked(api.agents.rules).mockResolvedValue({agent: [{rule: 'Bash(npm test:*)', scope: 'agent', addedAt: ''}],
      project: [{rule: 'Read(./**)', scope: 'project', addedAt: ''}], denyAfterMin: 0})
    vi.mocked(api.agents.removeRule).mockResolvedValue({} as never)
    vi.mocked(api.agents.setAnswerPolicy).mockResolvedValue({} as never)
    wrap(<RulesPanel agent={waiting('input')}/>)
    expect(await screen.findByText('Bash(npm test:*)')).toBeInTheDocument()
    expect(screen.getByText('every agent of the project')).toBeInTheDocument()
    fireEvent.click(screen.getByRole('button', {name: 'Remove Bash(npm test:*)'}))
    await vi.waitFor(() => expect(api.agents.removeRule).toHaveBeenCalledWith('p1', 'worker', 'Bash(npm test:*)', 'agent'))
    fireEvent.change(screen.getByLabelText('Policy for unanswered questions'), {target: {value: '15'}})
    await vi.waitFor(() => expect(api.agents.setAnswerPolicy).toHaveBeenCalledWith('p1', 'worker', 15))
  })
})
