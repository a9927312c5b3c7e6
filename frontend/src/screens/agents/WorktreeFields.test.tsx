import {act, fireEvent, render, screen} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api} from '../../api'
import {agent} from '../../test/fixtures'
import {AgentForm} from './AgentForm'
import {specOf, valuesOf} from './formSpec'
import {EMPTY, fieldOf} from './presets'

vi.mock('../../api', async (orig) => ({
  ...(await orig<typeof import('../../api')>()),
  api: {
    agents: {create: vi.fn(), update: vi.fn(), lookPath: vi.fn()}, projects: {pickFolder: vi.fn()},
    settings: {sandbox: vi.fn()}, mcpConfig: vi.fn(), worktree: {byDefault: vi.fn()},
  },
}))

function renderForm(editing?: ReturnType<typeof agent>) {
  const onDone = vi.fn()
  render(<QueryClientProvider client={new QueryClient()}>
    <AgentForm projectId="p1" projectPath="/src/app" editing={editing} onDone={onDone} onCancel={() => {}}/>
  </QueryClientProvider>)
  return onDone
}

beforeEach(() => {
  vi.clearAllMocks()
  vi.mocked(api.agents.lookPath).mockResolvedValue('/usr/bin/x')
  vi.mocked(api.settings.sandbox).mockResolvedValue({os: 'linux', landlock: true, netns: true, seatbelt: false})
  vi.mocked(api.mcpConfig).mockResolvedValue('{}')
})

describe('the agent form’s worktree option', () => {
  it('is on for a preset in a git project, and sends the base', async () => {
    vi.mocked(api.worktree.byDefault).mockResolvedValue(true)
    vi.mocked(api.agents.create).mockResolvedValue(agent({id: 'c'}))
    const onDone = renderForm()
    const box = screen.getByRole('checkbox', {name: 'Own git worktree'})
    expect(box).not.toBeChecked() // a custom command: opt in
    await vi.waitFor(() => expect(api.worktree.byDefault).toHaveBeenCalledWith('p1'))
    await act(() => new Promise((r) => setTimeout(r, 20))) // its answer reaches the form
    fireEvent.click(screen.getByRole('button', {name: 'Claude Code'}))
    expect(box).toBeChecked()
    fireEvent.change(screen.getByRole('textbox', {name: /Base/}), {target: {value: ' dev '}})
    fireEvent.change(document.querySelector('input[name="id"]')!, {target: {value: 'c'}})
    fireEvent.change(document.querySelector('textarea[name="prompt"]')!, {target: {value: 'go'}})
    fireEvent.click(screen.getByRole('button', {name: 'Create agent'}))
    await vi.waitFor(() => expect(onDone).toHaveBeenCalled())
    expect(vi.mocked(api.agents.create).mock.calls[0][1].workspace).toEqual({worktree: true, base: 'dev'})
  })

  it('stays off for a preset outside git', async () => {
    vi.mocked(api.worktree.byDefault).mockResolvedValue(false)
    renderForm()
    await vi.waitFor(() => expect(api.worktree.byDefault).toHaveBeenCalled())
    fireEvent.click(screen.getByRole('button', {name: 'Codex'}))
    expect(screen.getByRole('checkbox', {name: 'Own git worktree'})).not.toBeChecked()
  })

  it('shows an edited agent’s worktree as fixed', () => {
    vi.mocked(api.worktree.byDefault).mockResolvedValue(true)
    const a = agent({id: 'w', workspace: {worktree: true, base: 'main', branch: 'shepherd/w', path: '/wt/w'}})
    renderForm(a)
    expect(screen.queryByRole('checkbox', {name: 'Own git worktree'})).toBeNull()
    expect(screen.getByText(/stays as it is until the agent is removed/)).toBeInTheDocument()
    expect(valuesOf(a)).toMatchObject({worktree: true, base: 'main'})
  })

  it('maps the values to the spec and worktree errors to the base field', () => {
    expect(specOf({...EMPTY, id: 'a', command: 'x'}).workspace).toBeUndefined()
    expect(specOf({...EMPTY, id: 'a', command: 'x', worktree: true, base: ''}).workspace).toEqual({worktree: true, base: undefined})
    expect(fieldOf(`agent 'a': base "nope" is not a branch or commit of /src/app`)).toBe('base')
    expect(fieldOf(`agent 'a': /src/app: not a git repository`)).toBe('base')
  })
})
