import {act, fireEvent, render, screen, within} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api, type Agent} from '../../api'
import {agent} from '../../test/fixtures'
import {AgentForm} from './AgentForm'
import {LOOKUP_REST_MS} from './CommandField'
import {specOf, valuesOf} from './formSpec'
import {EMPTY} from './presets'

vi.mock('../../api', async (orig) => ({
  ...(await orig<typeof import('../../api')>()),
  api: {
    agents: {create: vi.fn(), update: vi.fn(), lookPath: vi.fn()}, projects: {pickFolder: vi.fn()},
    settings: {sandbox: vi.fn(), get: vi.fn()}, mcpConfig: vi.fn(),
  },
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

const FULL = {os: 'linux', landlock: true, landlockAbi: 6, netns: true, seatbelt: false}
const MCP = '{"mcpServers":{"shepherd":{"type":"stdio","command":"/opt/shepherd","args":["mcp"]}}}'

function wrap(ui: React.ReactNode) {
  const client = new QueryClient({defaultOptions: {queries: {retry: false}}})
  return render(<QueryClientProvider client={client}>{ui}</QueryClientProvider>)
}

function renderForm(onDone = vi.fn(), editing?: Agent) {
  wrap(<AgentForm projectId="p1" projectPath="/src/app" onDone={onDone} onCancel={vi.fn()} editing={editing}/>)
  return onDone
}
const input = (name: string) => document.querySelector<HTMLInputElement>(`[name="${name}"]`)!
const type = (name: string, value: string) => fireEvent.change(input(name), {target: {value}})

describe('AgentForm', () => {
  beforeEach(() => {
    vi.mocked(api.agents.lookPath).mockReset().mockResolvedValue('/usr/bin/x')
    vi.mocked(api.settings.sandbox).mockReset().mockResolvedValue(FULL)
    vi.mocked(api.settings.get).mockReset().mockResolvedValue({staleThresholdSec: 120, busyThresholdSec: 1800} as never)
    vi.mocked(api.mcpConfig).mockReset().mockResolvedValue(MCP)
    vi.mocked(api.projects.pickFolder).mockReset()
    vi.mocked(api.agents.update).mockReset()
    createMock.mockReset()
    agents.create = create = createMock
  })

  it('fills the Claude Code preset', () => {
    renderForm()
    expect(screen.getByRole('button', {name: 'Custom command'})).toHaveAttribute('aria-pressed', 'true')
    fireEvent.click(screen.getByRole('button', {name: 'Claude Code'}))
    expect(screen.getByRole('button', {name: 'Claude Code'})).toHaveAttribute('aria-pressed', 'true')
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
    renderForm(vi.fn(), agent({id: 'c', command: 'claude', profile: 'claude-stream-json',
      args: ['-p', '--model', 'opus', '--', 'do it'], resumeArgs: ['-p', '--resume', '{sessionId}', '--model', 'opus', '--', 'continue']}))
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

  it('does not show and hide the warning while the command is typed: it is looked up once typing rests or the field is left', async () => {
    vi.mocked(api.agents.lookPath).mockImplementation((cmd: string) =>
      cmd === 'claude' ? Promise.resolve('/usr/bin/claude') : Promise.reject(new Error('not found')))
    renderForm()
    const cmd = input('command')
    cmd.focus()
    vi.useFakeTimers()
    try {
      for (const typed of ['c', 'cl', 'cla', 'clau', 'claud']) {
        fireEvent.input(cmd, {target: {value: typed}})
        fireEvent.change(cmd, {target: {value: typed}})
        await act(async () => { vi.advanceTimersByTime(400) }) // a typist's pace, pausing a little
        expect(screen.queryByText(/is not on the PATH/)).toBeNull()
      }
      expect(api.agents.lookPath).not.toHaveBeenCalledWith('cla', expect.anything())
      // Resting on an unknown name: the warning, once.
      await act(async () => { vi.advanceTimersByTime(LOOKUP_REST_MS) })
    } finally {
      vi.useRealTimers()
    }
    expect(await screen.findByText(/is not on the PATH/)).toBeInTheDocument()
    // Leaving the field looks up at once.
    fireEvent.input(cmd, {target: {value: 'claude'}})
    fireEvent.change(cmd, {target: {value: 'claude'}})
    fireEvent.blur(cmd)
    await vi.waitFor(() => expect(screen.queryByText(/is not on the PATH/)).toBeNull())
  })

  it('edits with the record’s values', () => {
    renderForm(vi.fn(), agent({id: 'web', args: ['a b']}))
    expect(input('id')).toHaveAttribute('readonly')
    expect(input('args').value).toBe("'a b'")
    expect(screen.getByRole('button', {name: 'Save'})).toBeInTheDocument()
  })

  it('leaves an empty cwd to the engine (the project folder)', () => {
    expect(specOf({...EMPTY, id: 'a', command: 'x'}).cwd).toBeUndefined()
  })
  it('the Codex preset makes what `shepherd create --preset codex` makes: exec --json [-m MODEL] PROMPT', async () => {
    const rec = agent({id: 'cx'})
    create.mockResolvedValue(rec)
    renderForm()
    fireEvent.click(screen.getByRole('button', {name: 'Codex'}))
    expect(input('command').value).toBe('codex')
    expect(document.querySelector<HTMLSelectElement>('[name="profile"]')!.value).toBe('codex-json')
    expect(screen.getByText(/the last argument/)).toBeInTheDocument()
    expect(screen.queryByLabelText(/Shepherd’s tools/)).toBeNull() // Claude Code only
    type('id', 'cx')
    fireEvent.change(document.querySelector('textarea[name="prompt"]')!, {target: {value: 'fix the build'}})
    type('model', 'gpt-5-codex')
    fireEvent.click(screen.getByRole('button', {name: 'Create agent'}))
    await vi.waitFor(() => expect(create).toHaveBeenCalled())
    expect(create).toHaveBeenCalledWith('p1', expect.objectContaining({
      command: 'codex', profile: 'codex-json',
      args: ['exec', '--json', '-m', 'gpt-5-codex', 'fix the build'],
      resumeArgs: ['exec', '--json', '-m', 'gpt-5-codex', 'resume', '{sessionId}', 'continue'],
      permissions: null,
    }))
  })

  it('edits a Codex agent: prompt and model read back, sent back the same', async () => {
    const rec = agent({id: 'cx', command: 'codex', profile: 'codex-json', args: ['exec', '--json', '-m', 'o3', 'fix it'],
      resumeArgs: ['exec', '--json', '-m', 'o3', 'resume', '{sessionId}', 'continue']})
    vi.mocked(api.agents.update).mockResolvedValue(rec)
    renderForm(vi.fn(), rec)
    expect(document.querySelector<HTMLTextAreaElement>('textarea[name="prompt"]')!.value).toBe('fix it')
    expect(input('model').value).toBe('o3')
    expect(input('args').value).toBe('exec --json')
    expect(input('resumeArgs').value).toBe('exec --json resume {sessionId} continue')
    fireEvent.click(screen.getByRole('button', {name: 'Save'}))
    await vi.waitFor(() => expect(api.agents.update).toHaveBeenCalled())
    expect(api.agents.update).toHaveBeenCalledWith('p1', expect.objectContaining({args: rec.args, resumeArgs: rec.resumeArgs}))
  })

  it('warns with Codex’s install line when codex is not on PATH', async () => {
    vi.mocked(api.agents.lookPath).mockRejectedValue('exec: "codex": executable file not found in $PATH')
    renderForm()
    fireEvent.click(screen.getByRole('button', {name: 'Codex'}))
    expect(await screen.findByText(/is not on the PATH/)).toHaveTextContent('npm install -g @openai/codex')
  })

  it('Shepherd’s tools for Claude: --mcp-config with Shepherd’s value in the args and the resume args', async () => {
    create.mockResolvedValue(agent({id: 'c'}))
    renderForm()
    fireEvent.click(screen.getByRole('button', {name: 'Claude Code'}))
    type('id', 'c')
    fireEvent.change(document.querySelector('textarea[name="prompt"]')!, {target: {value: 'fix it'}})
    const box = screen.getByLabelText(/Give it Shepherd’s tools \(MCP\)/)
    expect(box).not.toBeChecked()
    expect(screen.getByText(/run and watch its own dev servers/)).toHaveTextContent(/runs sandboxed/)
    fireEvent.click(box)
    await vi.waitFor(() => expect(api.mcpConfig).toHaveBeenCalled())
    fireEvent.click(screen.getByRole('button', {name: 'Create agent'}))
    await vi.waitFor(() => expect(create).toHaveBeenCalled())
    expect(create).toHaveBeenCalledWith('p1', expect.objectContaining({
      args: ['-p', '--verbose', '--output-format', 'stream-json', '--mcp-config', MCP, '--', 'fix it'],
      resumeArgs: ['-p', '--verbose', '--output-format', 'stream-json', '--resume', '{sessionId}', '--mcp-config', MCP, '--', 'continue'],
    }))
  })

  it('an agent whose args hold --mcp-config shows the box ticked; unticking takes it out of both', async () => {
    const old = '{"mcpServers":{"shepherd":{"command":"/old/shepherd","args":["mcp"]}}}'
    const rec = agent({id: 'c', command: 'claude', profile: 'claude-stream-json',
      args: ['-p', '--mcp-config', old, '--', 'go'], resumeArgs: ['-p', '--resume', '{sessionId}', '--mcp-config', old, '--', 'continue']})
    vi.mocked(api.agents.update).mockResolvedValue(rec)
    renderForm(vi.fn(), rec)
    expect(input('args').value).toBe('-p')
    expect(input('resumeArgs').value).toBe('-p --resume {sessionId} -- continue')
    const box = screen.getByLabelText(/Give it Shepherd’s tools/)
    expect(box).toBeChecked()
    fireEvent.click(box)
    fireEvent.click(screen.getByRole('button', {name: 'Save'}))
    await vi.waitFor(() => expect(api.agents.update).toHaveBeenCalled())
    expect(api.agents.update).toHaveBeenCalledWith('p1', expect.objectContaining({
      args: ['-p', '--', 'go'], resumeArgs: ['-p', '--resume', '{sessionId}', '--', 'continue'],
    }))
  })

  it('not sandboxed by default: permissions null', async () => {
    create.mockResolvedValue(agent({id: 'x'}))
    renderForm()
    expect(screen.getByLabelText('Run sandboxed')).not.toBeChecked()
    expect(screen.queryByLabelText('Network')).toBeNull()
    type('id', 'x')
    type('command', 'make')
    fireEvent.click(screen.getByRole('button', {name: 'Create agent'}))
    await vi.waitFor(() => expect(create).toHaveBeenCalled())
    expect(vi.mocked(create).mock.calls[0][1].permissions).toBeNull()
  })

  it('sandboxed: the baseline explained, network and folders to write to (typed, picked, removed) as tags', async () => {
    create.mockResolvedValue(agent({id: 'x'}))
    vi.mocked(api.projects.pickFolder).mockResolvedValue('/data/cache')
    renderForm()
    type('id', 'x')
    type('command', 'make')
    fireEvent.click(screen.getByLabelText('Run sandboxed'))
    expect(screen.getByText(/may read any file, but it has no network and writes nothing except its own log/)).toBeInTheDocument()
    expect(screen.getByText(/None: it cannot change any file/)).toBeInTheDocument()
    fireEvent.click(screen.getByLabelText(/^Network/))
    const dir = screen.getByLabelText('Add a folder it may write to')
    fireEvent.change(dir, {target: {value: 'relative/dir'}})
    fireEvent.keyDown(dir, {key: 'Enter'})
    expect(screen.getByRole('alert')).toHaveTextContent('an absolute path')
    fireEvent.change(dir, {target: {value: '/src/app/build'}})
    fireEvent.keyDown(dir, {key: 'Enter'})
    fireEvent.click(within(document.querySelector<HTMLElement>('.write-dirs')!).getByRole('button', {name: 'Choose…'}))
    const list = await screen.findByRole('list', {name: 'Folders it may write to'})
    await vi.waitFor(() => expect(within(list).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['/src/app/build×', '/data/cache×']))
    fireEvent.click(screen.getByRole('button', {name: '+ its working folder /src/app'}))
    fireEvent.click(screen.getByRole('button', {name: 'Remove /data/cache'}))
    fireEvent.click(screen.getByRole('button', {name: 'Create agent'}))
    await vi.waitFor(() => expect(create).toHaveBeenCalled())
    expect(vi.mocked(create).mock.calls[0][1].permissions).toEqual(['@network', '@write:/src/app/build', '@write:/src/app'])
  })

  it('a folder typed but not added is sent too; the engine’s message about a tag shows in the section, nothing lost', async () => {
    rejectWith(`agent 'x': invalid permission "@write:/nope": /nope does not exist`)
    renderForm()
    type('id', 'x')
    type('command', 'make')
    fireEvent.click(screen.getByLabelText('Run sandboxed'))
    fireEvent.change(screen.getByLabelText('Add a folder it may write to'), {target: {value: '/nope'}})
    fireEvent.click(screen.getByRole('button', {name: 'Create agent'}))
    const msg = await screen.findByText(/invalid permission "@write:\/nope"/)
    expect(msg.closest('fieldset')).toHaveTextContent('Sandbox')
    expect(within(screen.getByRole('list', {name: 'Folders it may write to'})).getByText('/nope')).toBeInTheDocument()
    expect(input('id').value).toBe('x')
  })

  it('edit loads the grants and sends them back (other tags kept); unticking sends null', async () => {
    const rec = agent({id: 'sb', sandbox: {network: true, writeDirs: ['/w'], permissions: ['@network', '@write:/w', '@read:*']}})
    vi.mocked(api.agents.update).mockResolvedValue(rec)
    renderForm(vi.fn(), rec)
    expect(screen.getByLabelText('Run sandboxed')).toBeChecked()
    expect(screen.getByLabelText(/^Network/)).toBeChecked()
    expect(within(screen.getByRole('list', {name: 'Folders it may write to'})).getByText('/w')).toBeInTheDocument()
    fireEvent.click(screen.getByRole('button', {name: 'Save'}))
    await vi.waitFor(() => expect(api.agents.update).toHaveBeenCalledTimes(1))
    expect(vi.mocked(api.agents.update).mock.calls[0][1].permissions).toEqual(['@network', '@write:/w', '@read:*'])
    fireEvent.click(screen.getByLabelText('Run sandboxed'))
    fireEvent.click(screen.getByRole('button', {name: 'Save'}))
    await vi.waitFor(() => expect(api.agents.update).toHaveBeenCalledTimes(2))
    expect(vi.mocked(api.agents.update).mock.calls[1][1].permissions).toBeNull()
  })

  it('says what the machine lacks for the chosen grants; network namespaces matter only without Network', async () => {
    vi.mocked(api.settings.sandbox).mockResolvedValue({...FULL, netns: false, netnsError: 'user namespaces are disabled'})
    renderForm()
    fireEvent.click(screen.getByLabelText('Run sandboxed'))
    const warn = await screen.findByText(/cannot sandbox it like this/)
    expect(warn).toHaveTextContent('network namespaces, which take the network away (user namespaces are disabled)')
    expect(warn).toHaveTextContent('unless you allow the network')
    fireEvent.click(screen.getByLabelText(/^Network/))
    expect(screen.queryByText(/cannot sandbox it like this/)).toBeNull()
  })

  it('without Landlock, even a sandbox with network cannot start', async () => {
    vi.mocked(api.settings.sandbox).mockResolvedValue({...FULL, landlock: false, landlockError: 'not in the kernel'})
    renderForm()
    fireEvent.click(screen.getByLabelText('Run sandboxed'))
    fireEvent.click(screen.getByLabelText(/^Network/))
    expect(await screen.findByText(/cannot sandbox it like this/)).toHaveTextContent('Landlock, which limits writes to the chosen folders (not in the kernel)')
  })

  it('the silence check says what applies to this agent: flag for any command, resume for Claude; onStale and the toggle go in the spec', async () => {
    createMock.mockImplementation(async (_p, spec) => agent({id: spec.id, command: spec.command}))
    renderForm()
    const rule = () => document.querySelector('[data-silence-rule]')!.textContent
    await vi.waitFor(() => expect(rule()).toContain('Silent past 120 s (2 min) with no CPU use → flagged in Needs you (left running)'))
    const onStale = () => document.querySelector<HTMLSelectElement>('[name="onStale"]')!
    const options = () => Array.from(onStale().options).map((o) => o.value)
    expect(options()).toEqual(['', 'flag', 'restart']) // no session to resume
    expect(onStale().options[0].text).toBe('Default: flag it')
    fireEvent.click(screen.getByRole('button', {name: 'Claude Code'}))
    expect(rule()).toContain('→ its log is read: marked done if it finished, else killed and resumed in its session')
    expect(rule()).toContain('A tool call in flight counts as work for up to 30 min')
    expect(options()).toEqual(['', 'flag', 'restart', 'resume'])
    expect(onStale().options[0].text).toBe('Default: resume its session')
    fireEvent.change(onStale(), {target: {value: 'restart'}})
    expect(rule()).toContain('→ killed and started again with its arguments')
    fireEvent.click(screen.getByRole('button', {name: 'Custom command'}))
    fireEvent.change(onStale(), {target: {value: 'flag'}})
    type('id', 'dev')
    type('command', 'npm')
    fireEvent.click(screen.getByLabelText('Watch it for silence'))
    expect(rule()).toContain('Off: a silent command is never flagged')
    expect(document.querySelector('[name="onStale"]')).toBeNull()
    fireEvent.click(screen.getByRole('button', {name: 'Create agent'}))
    await vi.waitFor(() => expect(createMock).toHaveBeenCalledWith('p1', expect.objectContaining({id: 'dev', staleCheck: false, onStale: 'flag'})))
  })

  it('onStale round-trips through an edit; resume left on a profile that cannot resume is the default', () => {
    const claude = agent({id: 'c', command: 'claude', profile: 'claude-stream-json', onStale: 'resume', staleCheck: false})
    const v = valuesOf(claude)
    expect(v).toMatchObject({onStale: 'resume', staleCheck: false})
    expect(specOf(v)).toMatchObject({onStale: 'resume', staleCheck: false})
    expect(specOf({...v, profile: 'generic'})).toMatchObject({onStale: ''})
    expect(valuesOf(agent())).toMatchObject({onStale: '', staleCheck: true})
  })
})
