import {act, fireEvent, render, screen, waitFor} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'
import {api, type Diff} from '../../api'
import {agent} from '../../test/fixtures'
import {DiffView} from './DiffView'

const handlers = new Map<string, (data: unknown) => void>()
vi.mock('../../api', async (orig) => {
  const real = await orig<typeof import('../../api')>()
  return {
    ...real,
    api: {worktree: {diff: vi.fn(), refresh: vi.fn(), plan: vi.fn(), merge: vi.fn(), askToResolve: vi.fn()}},
    onEvent: (name: string, h: (d: unknown) => void) => {
      handlers.set(name, h)
      return () => handlers.delete(name)
    },
  }
})

// jsdom lays nothing out: give the scroll boxes a height.
beforeEach(() => {
  handlers.clear()
  vi.clearAllMocks()
  Object.defineProperty(HTMLElement.prototype, 'clientHeight', {configurable: true, get: () => 400})
  Object.defineProperty(HTMLElement.prototype, 'offsetHeight', {configurable: true, get: () => 400})
})
afterEach(() => {
  delete (HTMLElement.prototype as {clientHeight?: number}).clientHeight
  delete (HTMLElement.prototype as {offsetHeight?: number}).offsetHeight
})

/** A diff of n files, each with one hunk of 10 changed lines. */
function bigDiff(n: number): Diff {
  return {
    base: 'main', from: '0123456789abcdef', added: n * 5, deleted: n * 5, truncated: false,
    files: Array.from({length: n}, (_, i) => ({
      path: `src/file${String(i).padStart(4, '0')}.go`, status: 'modified', added: 5, deleted: 5,
      hunks: [{header: `@@ -1,10 +1,10 @@ file ${i}`, oldStart: 1, oldLines: 10, newStart: 1, newLines: 10,
        lines: Array.from({length: 10}, (_, j) => ({op: j % 2 ? '+' : '-', text: `line ${j} of ${i}`}))}],
    })),
  }
}

const wt = agent({id: 'feat', workspace: {worktree: true, base: 'main', branch: 'shepherd/feat', path: '/wt/feat', ahead: 1, behind: 0}})

function renderView() {
  const qc = new QueryClient()
  render(<QueryClientProvider client={qc}><DiffView agent={wt}/></QueryClientProvider>)
}

describe('DiffView', () => {
  it('shows the changed files with +/− and each file’s hunks', async () => {
    vi.mocked(api.worktree.diff).mockResolvedValue({
      base: 'main', from: 'abcdef0123', added: 2, deleted: 1, truncated: false,
      files: [
        {path: 'a.go', status: 'modified', added: 1, deleted: 1, hunks: [{header: '@@ -3 +3 @@ func a()', oldStart: 3, oldLines: 1,
          newStart: 3, newLines: 1, lines: [{op: '-', text: 'old()'}, {op: '+', text: 'new()'}]}]},
        {path: 'notes.md', status: 'untracked', added: 1, deleted: 0, hunks: [{header: '@@ -0,0 +1 @@', oldStart: 0, oldLines: 0,
          newStart: 1, newLines: 1, lines: [{op: '+', text: 'hello'}]}]},
      ],
    })
    renderView()
    expect(await screen.findByText('2 files changed')).toBeInTheDocument()
    const files = screen.getAllByRole('option')
    expect(files.map((f) => f.textContent)).toEqual(['Ma.go+1−1', 'Unotes.md+1−0'])
    expect(screen.getByText('@@ -3 +3 @@ func a()')).toBeInTheDocument()
    expect(screen.getByText('new()').closest('.diff-line')).toHaveClass('add')
    expect(screen.getByText('old()').closest('.diff-line')).toHaveClass('del')
    expect(screen.getByText('hello')).toBeInTheDocument()
  })

  it('renders only a window of rows for 1,000 changed files', async () => {
    vi.mocked(api.worktree.diff).mockResolvedValue(bigDiff(1000))
    renderView()
    expect(await screen.findByText('1000 files changed')).toBeInTheDocument()
    const rows = document.querySelectorAll('.diff-row').length
    const files = screen.getAllByRole('option').length
    expect(rows).toBeGreaterThan(10)
    expect(rows).toBeLessThan(100) // of 12,000
    expect(files).toBeGreaterThan(5)
    expect(files).toBeLessThan(60) // of 1,000
    expect(screen.queryByText('src/file0999.go')).toBeNull()
  })

  it('loads again when the run ends (agent:worktree) and on Refresh', async () => {
    vi.mocked(api.worktree.diff).mockResolvedValue({base: 'main', from: 'abc', added: 0, deleted: 0, truncated: false, files: []})
    vi.mocked(api.worktree.refresh).mockResolvedValue({projectId: 'p1', agentId: 'feat',
      status: {branch: 'shepherd/feat', base: 'main', ahead: 1, behind: 0, dirty: false}})
    renderView()
    expect(await screen.findByText('No changes against main yet.')).toBeInTheDocument()
    vi.mocked(api.worktree.diff).mockResolvedValue(bigDiff(3))
    act(() => handlers.get('agent:worktree')?.({projectId: 'p1', agentId: 'other', status: {}}))
    expect(api.worktree.diff).toHaveBeenCalledTimes(1) // another agent's: not this one
    act(() => handlers.get('agent:worktree')?.({projectId: 'p1', agentId: 'feat', status: {}}))
    expect(await screen.findByText('3 files changed')).toBeInTheDocument()
    fireEvent.click(screen.getByRole('button', {name: 'Refresh'}))
    await waitFor(() => expect(api.worktree.refresh).toHaveBeenCalledWith('p1', 'feat'))
    await waitFor(() => expect(api.worktree.diff).toHaveBeenCalledTimes(3))
  })

  it('shows a symlink as its text and says why a file has no lines', async () => {
    vi.mocked(api.worktree.diff).mockResolvedValue({
      base: 'main', from: 'abcdef0123', added: 1, deleted: 0, truncated: false,
      files: [
        {path: 'leak', status: 'untracked', mode: '120000', added: 1, deleted: 0, hunks: [{header: '@@ -0,0 +1 @@', oldStart: 0, oldLines: 0,
          newStart: 1, newLines: 1, lines: [{op: '+', text: '/home/u/.config/shepherd/engine.json'}, {op: '\\', text: ' No newline at end of file'}]}]},
        {path: 'pipe', status: 'untracked', added: 0, deleted: 0, note: 'a named pipe: not read', hunks: []},
        {path: 'huge.log', status: 'untracked', added: 0, deleted: 0, note: 'too large to show (3.0 MiB)', hunks: []},
      ],
    })
    renderView()
    expect(await screen.findByText('3 files changed')).toBeInTheDocument()
    expect(screen.getAllByRole('option')[0].textContent).toContain('symlink')
    expect(screen.getByText('/home/u/.config/shepherd/engine.json')).toBeInTheDocument()
    expect(screen.getByText('A named pipe: not read')).toBeInTheDocument()
    expect(screen.getByText('Too large to show (3.0 MiB)')).toBeInTheDocument()
  })

  it('opens the merge dialog from the Diff', async () => {
    vi.mocked(api.worktree.diff).mockResolvedValue(bigDiff(1))
    vi.mocked(api.worktree.plan).mockResolvedValue({branch: 'shepherd/feat', base: 'main', repo: '/src/app', ahead: 1, behind: 0,
      uncommitted: [], message: '', merging: false, upToDate: false})
    renderView()
    await screen.findByText('1 file changed')
    fireEvent.click(screen.getByRole('button', {name: 'Merge…'}))
    expect(await screen.findByRole('dialog', {name: 'Merge feat into main'})).toBeInTheDocument()
  })

  it('says why there is no diff', async () => {
    vi.mocked(api.worktree.diff).mockRejectedValue('agent \'feat\': worktree folder /wt/feat vanished')
    renderView()
    expect(await screen.findByText(/worktree folder \/wt\/feat vanished/)).toBeInTheDocument()
  })

  it('the changed files by keyboard: one Tab stop, ↑ ↓ Home End choose a file; the list says which', async () => {
    vi.mocked(api.worktree.diff).mockResolvedValue(bigDiff(30))
    renderView()
    const files = await screen.findByRole('listbox', {name: 'Changed files'})
    expect(files).toHaveAttribute('tabindex', '0')
    act(() => files.focus())
    const current = () => document.getElementById(files.getAttribute('aria-activedescendant')!)
    expect(current()).toHaveTextContent('src/file0000.go')
    fireEvent.keyDown(files, {key: 'ArrowDown'})
    fireEvent.keyDown(files, {key: 'ArrowDown'})
    expect(current()).toHaveTextContent('src/file0002.go')
    expect(current()).toHaveAttribute('aria-selected', 'true')
    fireEvent.keyDown(files, {key: 'ArrowUp'})
    expect(screen.getByRole('option', {selected: true})).toHaveTextContent('src/file0001.go')
    const end = new KeyboardEvent('keydown', {key: 'End', bubbles: true, cancelable: true})
    act(() => void files.dispatchEvent(end))
    expect(end.defaultPrevented).toBe(true) // not the agents list's key
    expect(files.getAttribute('aria-activedescendant')).toMatch(/-29$/)
    fireEvent.keyDown(files, {key: 'Home'})
    expect(current()).toHaveTextContent('src/file0000.go')
  })
})
