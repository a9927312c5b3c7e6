import {fireEvent, render, screen, waitFor} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api, type MergePlan} from '../../api'
import {agent} from '../../test/fixtures'
import {RemoveWorktreeDialog} from './RemoveWorktreeDialog'

vi.mock('../../api', async (orig) => {
  const real = await orig<typeof import('../../api')>()
  return {...real, api: {agents: {stop: vi.fn()}, worktree: {refresh: vi.fn(), remove: vi.fn(), plan: vi.fn(), merge: vi.fn(), askToResolve: vi.fn()}}}
})

const wt = agent({id: 'feat', status: 'completed', workspace: {worktree: true, base: 'main', branch: 'shepherd/feat', path: '/wt/feat', repo: '/src/app'}})
const status = (dirty: boolean, ahead = 2) =>
  ({projectId: 'p1', agentId: 'feat', status: {branch: 'shepherd/feat', base: 'main', ahead, behind: 0, dirty}})
const plan = (patch: Partial<MergePlan> = {}): MergePlan => ({branch: 'shepherd/feat', base: 'main', repo: '/src/app', ahead: 2, behind: 0,
  uncommitted: [{path: 'notes.md', status: 'untracked'}, {path: 'a.go', status: 'modified'}], message: 'Work of agent feat\n',
  identity: 'The User <user@example.com>', merging: false, upToDate: false, ...patch})

function renderDialog(a = wt) {
  const onRemoved = vi.fn()
  const onClose = vi.fn()
  render(<QueryClientProvider client={new QueryClient()}>
    <RemoveWorktreeDialog agent={a} onRemoved={onRemoved} onClose={onClose}/>
  </QueryClientProvider>)
  return {onRemoved, onClose}
}

beforeEach(() => vi.clearAllMocks())

describe('RemoveWorktreeDialog', () => {
  it('offers keep, merge and discard; a merge shows what it commits, with an editable message, and takes it', async () => {
    vi.mocked(api.worktree.refresh).mockResolvedValue(status(true))
    vi.mocked(api.worktree.plan).mockResolvedValue(plan())
    vi.mocked(api.worktree.merge).mockResolvedValue({merged: true, committed: 'c0ffee00', fastForward: true})
    vi.mocked(api.worktree.remove).mockResolvedValue(undefined)
    const {onRemoved} = renderDialog()
    expect(await screen.findByText(/2 ahead of main/)).toBeInTheDocument()
    const radios = screen.getAllByRole('radio')
    expect(radios.map((r) => (r as HTMLInputElement).value)).toEqual(['keep', 'merge', 'discard'])
    expect(radios[0]).toBeChecked()
    fireEvent.click(screen.getByRole('radio', {name: /Merge into the base/}))
    expect(await screen.findByRole('list', {name: 'What is committed first'})).toBeInTheDocument()
    expect(screen.getByText(/as The User <user@example.com>/)).toBeInTheDocument()
    expect(screen.getByRole('list', {name: 'What is committed first'}).textContent).toContain('notes.md')
    // No trap: a dirty worktree merges without losing anything.
    expect(screen.queryByRole('checkbox', {name: 'Lose the uncommitted changes'})).toBeNull()
    fireEvent.change(screen.getByRole('textbox', {name: 'Commit message'}), {target: {value: 'The parser, finished'}})
    fireEvent.click(screen.getByRole('button', {name: 'Merge and remove'}))
    await waitFor(() => expect(onRemoved).toHaveBeenCalled())
    expect(api.worktree.merge).toHaveBeenCalledWith('p1', 'feat', 'The parser, finished')
    expect(api.worktree.remove).toHaveBeenCalledWith('p1', 'feat', {force: false, deleteLog: false, end: 'merge', discardChanges: false})
  })

  it('keeping or discarding a dirty worktree asks before its changes go', async () => {
    vi.mocked(api.worktree.refresh).mockResolvedValue(status(true))
    vi.mocked(api.worktree.remove).mockResolvedValue(undefined)
    renderDialog()
    expect(await screen.findByText('Its worktree has uncommitted changes.')).toBeInTheDocument()
    fireEvent.click(screen.getByRole('radio', {name: /Discard/}))
    const go = screen.getByRole('button', {name: 'Discard and remove'})
    expect(go).toBeDisabled()
    fireEvent.click(screen.getByRole('checkbox', {name: 'Lose the uncommitted changes'}))
    expect(go).toBeEnabled()
    fireEvent.click(go)
    await waitFor(() => expect(api.worktree.remove).toHaveBeenCalledWith('p1', 'feat',
      {force: false, deleteLog: false, end: 'discard', discardChanges: true}))
  })

  it('a conflict keeps the agent and offers its two ways out', async () => {
    vi.mocked(api.worktree.refresh).mockResolvedValue(status(false))
    vi.mocked(api.worktree.plan).mockResolvedValue(plan())
    vi.mocked(api.worktree.merge).mockResolvedValue({merged: false, committed: 'c0ffee00',
      conflict: {branch: 'shepherd/feat', base: 'main', files: ['a.go', 'b.go'], committed: 'c0ffee00'}})
    vi.mocked(api.worktree.askToResolve).mockResolvedValue({conflicts: ['a.go', 'b.go'], status: 'spawning', instruction: 'resolve'})
    vi.mocked(api.worktree.remove).mockResolvedValue(undefined)
    const {onRemoved, onClose} = renderDialog()
    await screen.findByText(/2 ahead of main/)
    fireEvent.click(screen.getByRole('radio', {name: /Merge into the base/}))
    await screen.findByRole('list', {name: 'What is committed first'})
    fireEvent.click(screen.getByRole('button', {name: 'Merge and remove'}))
    await waitFor(() => expect(api.worktree.merge).toHaveBeenCalled())
    expect(await screen.findByText(/The merge was aborted: nothing is lost/)).toBeInTheDocument()
    expect(screen.getByText('a.go')).toBeInTheDocument()
    expect(onRemoved).not.toHaveBeenCalled()
    expect(api.worktree.remove).not.toHaveBeenCalled()
    fireEvent.click(screen.getByRole('button', {name: 'Ask feat to merge main and resolve'}))
    await waitFor(() => expect(onClose).toHaveBeenCalled())
    expect(api.worktree.askToResolve).toHaveBeenCalledWith('p1', 'feat')
    expect(api.worktree.remove).not.toHaveBeenCalled()
  })

  it('keep the branch after a conflict removes the folder and keeps the branch', async () => {
    vi.mocked(api.worktree.refresh).mockResolvedValue(status(false))
    vi.mocked(api.worktree.plan).mockResolvedValue(plan({uncommitted: []}))
    vi.mocked(api.worktree.merge).mockResolvedValue({merged: false, conflict: {branch: 'shepherd/feat', base: 'main', files: ['a.go']}})
    vi.mocked(api.worktree.remove).mockResolvedValue(undefined)
    const {onRemoved} = renderDialog()
    await screen.findByText(/2 ahead of main/)
    fireEvent.click(screen.getByRole('radio', {name: /Merge into the base/}))
    await screen.findByText(/commits are merged as they are/)
    fireEvent.click(screen.getByRole('button', {name: 'Merge and remove'}))
    fireEvent.click(await screen.findByRole('button', {name: 'Remove it, keep the branch'}))
    await waitFor(() => expect(onRemoved).toHaveBeenCalled())
    expect(api.worktree.remove).toHaveBeenCalledWith('p1', 'feat', {force: false, deleteLog: false, end: 'keep', discardChanges: false})
  })

  it('a merge that cannot happen says why and waits', async () => {
    vi.mocked(api.worktree.refresh).mockResolvedValue(status(false))
    vi.mocked(api.worktree.plan).mockResolvedValue(plan({blocked: 'git has no name and email to commit with (…): set yours with `git config --global user.name "Your Name"`'}))
    renderDialog()
    await screen.findByText(/2 ahead of main/)
    fireEvent.click(screen.getByRole('radio', {name: /Merge into the base/}))
    expect(await screen.findByText(/git config --global user.name/)).toBeInTheDocument()
    expect(screen.getByRole('button', {name: 'Merge and remove'})).toBeDisabled()
  })
})
