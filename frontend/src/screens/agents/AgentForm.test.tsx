import {fireEvent, render, screen} from '@testing-library/react'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api} from '../../api'
import {agent} from '../../test/fixtures'
import {AgentForm, specOf} from './AgentForm'
import {EMPTY} from './presets'

vi.mock('../../api', async (orig) => ({
  ...(await orig<typeof import('../../api')>()),
  api: {agents: {create: vi.fn(), update: vi.fn(), lookPath: vi.fn()}, projects: {pickFolder: vi.fn()}},
}))
const agents = api.agents as {create: unknown}
const createMock = vi.mocked(api.agents.create)
let create = createMock

// Wails rejects a failed Go call with the error's text. (A plain function:
// vitest reports a spy's rejected promise as the test's failure.)
function rejectWith(message: string) {
  agents.create = () => {
    const p = Promise.reject(message)
    p.catch(() => {})
    return p
  }
}

function renderForm(onDone = vi.fn()) {
  render(<AgentForm projectId="p1" projectPath="/src/app" onDone={onDone} onCancel={vi.fn()}/>)
  return onDone
}
const input = (name: string) => document.querySelector<HTMLInputElement>(`[name="${name}"]`)!
const type = (name: string, value: string) => fireEvent.change(input(name), {target: {value}})

describe('AgentForm', () => {
  beforeEach(() => {
    vi.mocked(api.agents.lookPath).mockReset().mockResolvedValue('/usr/bin/x')
    createMock.mockReset()
    agents.create = create = createMock
  })

  it('fills the Claude Code preset', () => {
    renderForm()
    fireEvent.click(screen.getByRole('button', {name: 'Claude Code'}))
    expect(input('command').value).toBe('claude')
    expect(input('args').value).toBe('-p --verbose --output-format stream-json')
    expect(document.querySelector<HTMLSelectElement>('[name="profile"]')!.value).toBe('claude-stream-json')
    expect(input('resumeArgs').value).toBe('-p --verbose --output-format stream-json --resume {sessionId} -- continue')
  })

  it('shows the engine’s validation message at its field and saves nothing', async () => {
    rejectWith("agent 'x': command is empty")
    const onDone = renderForm()
    type('id', 'x')
    fireEvent.click(screen.getByRole('button', {name: 'Create agent'}))
    expect(await screen.findByText("agent 'x': command is empty")).toBeInTheDocument()
    expect(input('command')).toHaveAttribute('aria-invalid', 'true')
    expect(onDone).not.toHaveBeenCalled()
  })

  it('puts a cwd error at the working folder', async () => {
    rejectWith("agent 'x': cwd /nope does not exist")
    renderForm()
    type('id', 'x')
    type('command', 'make')
    type('cwd', '/nope')
    fireEvent.click(screen.getByRole('button', {name: 'Create agent'}))
    expect(await screen.findByText("agent 'x': cwd /nope does not exist")).toBeInTheDocument()
    expect(input('cwd')).toHaveAttribute('aria-invalid', 'true')
  })

  it('refuses a grace that is not a number before asking the engine', async () => {
    renderForm()
    type('graceSec', 'soon')
    fireEvent.click(screen.getByRole('button', {name: 'Create agent'}))
    expect(await screen.findByText('a whole number of seconds')).toBeInTheDocument()
    expect(create).not.toHaveBeenCalled()
  })

  it('sends the spec and hands back the record', async () => {
    const rec = agent({id: 'x'})
    create.mockResolvedValue(rec)
    const onDone = renderForm()
    type('id', 'x')
    type('command', 'sh')
    type('args', `-c "echo hi; exit 3"`)
    fireEvent.click(screen.getByRole('button', {name: '+ Add variable'}))
    fireEvent.change(screen.getByLabelText('Variable 1 name'), {target: {value: 'API_TOKEN'}})
    fireEvent.change(screen.getByLabelText('Variable 1 value'), {target: {value: 's3cret'}})
    expect(screen.getByLabelText('Variable 1 value')).toHaveAttribute('type', 'password')
    fireEvent.click(screen.getByRole('button', {name: 'Create agent'}))
    await vi.waitFor(() => expect(onDone).toHaveBeenCalledWith(rec, false))
    expect(create).toHaveBeenCalledWith('p1', expect.objectContaining({
      id: 'x', command: 'sh', args: ['-c', 'echo hi; exit 3'], env: {API_TOKEN: 's3cret'}, graceSec: 10, timeoutSec: 0,
    }))
  })

  it('the Claude Code preset puts the prompt after -- and the model before it, and creates and starts', async () => {
    const rec = agent({id: 'c'})
    create.mockResolvedValue(rec)
    const onDone = renderForm()
    fireEvent.click(screen.getByRole('button', {name: 'Claude Code'}))
    type('id', 'c')
    fireEvent.change(document.querySelector('textarea[name="prompt"]')!, {target: {value: 'fix the tests\nthen the docs'}})
    type('model', 'sonnet')
    fireEvent.click(screen.getByRole('button', {name: 'Create and start'}))
    await vi.waitFor(() => expect(onDone).toHaveBeenCalledWith(rec, true))
    expect(create).toHaveBeenCalledWith('p1', expect.objectContaining({
      command: 'claude', profile: 'claude-stream-json',
      args: ['-p', '--verbose', '--output-format', 'stream-json', '--model', 'sonnet', '--', 'fix the tests\nthen the docs'],
      resumeArgs: ['-p', '--verbose', '--output-format', 'stream-json', '--resume', '{sessionId}', '--model', 'sonnet', '--', 'continue'],
    }))
  })

  it('reads the prompt and model back when editing a Claude agent', () => {
    render(<AgentForm projectId="p1" projectPath="/src/app" onDone={vi.fn()} onCancel={vi.fn()}
      editing={agent({id: 'c', command: 'claude', profile: 'claude-stream-json',
        args: ['-p', '--model', 'opus', '--', 'do it'], resumeArgs: ['-p', '--resume', '{sessionId}', '--model', 'opus', '--', 'continue']})}/>)
    expect(document.querySelector<HTMLTextAreaElement>('textarea[name="prompt"]')!.value).toBe('do it')
    expect(input('model').value).toBe('opus')
    expect(input('args').value).toBe('-p')
    expect(input('resumeArgs').value).toBe('-p --resume {sessionId} -- continue')
  })

  it('warns, without refusing, when the command is not on PATH', async () => {
    vi.mocked(api.agents.lookPath).mockRejectedValue('exec: "claude": executable file not found in $PATH')
    renderForm()
    fireEvent.click(screen.getByRole('button', {name: 'Claude Code'}))
    expect(await screen.findByText(/is not on the PATH/)).toHaveTextContent('npm install -g @anthropic-ai/claude-code')
    expect(screen.getByRole('button', {name: 'Create agent'})).toBeEnabled()
  })

  it('edits with the record’s values', () => {
    render(<AgentForm projectId="p1" projectPath="/src/app" editing={agent({id: 'web', args: ['a b']})}
      onDone={vi.fn()} onCancel={vi.fn()}/>)
    expect(input('id')).toHaveAttribute('readonly')
    expect(input('args').value).toBe("'a b'")
    expect(screen.getByRole('button', {name: 'Save'})).toBeInTheDocument()
  })

  it('leaves an empty cwd to the engine (the project folder)', () => {
    expect(specOf({...EMPTY, id: 'a', command: 'x'}).cwd).toBeUndefined()
  })
})
