import {fireEvent, render, screen, waitFor} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api, type MergePlan} from '../../api'
import {agent} from '../../test/fixtures'
import {MergeDialog} from './MergeDialog'

vi.mock('../../api', async (orig) => {
  const real = await orig<typeof import('../../api')>()
  return {...real, api: {worktree: {plan: vi.fn(), merge: vi.fn(), askToResolve: vi.fn()}}}
})

const wt = agent({id: 'feat', status: 'completed', workspace: {worktree: true, base: 'main', branch: 'shepherd/feat', path: '/wt/feat'}})
const plan = (patch: Partial<MergePlan> = {}): MergePlan => ({branch: 'shepherd/feat', base: 'main', repo: '/src/app', ahead: 1, behind: 1,
  uncommitted: [{path: 'notes.md', status: 'untracked'}], message: 'Work of agent feat\n\n  new: notes.md\n',
  identity: 'The User <user@example.com>', merging: false, upToDate: false, ...patch})

function renderDialog() {
  const onClose = vi.fn()
  render(<QueryClientProvider client={new QueryClient()}><MergeDialog agent={wt} onClose={onClose}/></QueryClientProvider>)
  return onClose
}

beforeEach(() => vi.clearAllMocks())

describe('MergeDialog', () => {
  it('shows what is committed first and merges with the message as edited', async () => {
    vi.mocked(api.worktree.plan).mockResolvedValue(plan())
    vi.mocked(api.worktree.merge).mockResolvedValue({merged: true, committed: 'abc', head: 'def'})
    const onClose = renderDialog()
    const box = await screen.findByRole('textbox', {name: 'Commit message'})
    expect((box as HTMLTextAreaElement).value).toBe('Work of agent feat\n\n  new: notes.md\n')
    expect(screen.getByText(/1 ahead, 1 behind main/)).toBeInTheDocument()
    fireEvent.change(box, {target: {value: 'Notes'}})
    fireEvent.click(screen.getByRole('button', {name: 'Commit and merge'}))
    await waitFor(() => expect(onClose).toHaveBeenCalled())
    expect(api.worktree.merge).toHaveBeenCalledWith('p1', 'feat', 'Notes')
  })

  it('a conflict lists its files and its two ways out', async () => {
    vi.mocked(api.worktree.plan).mockResolvedValue(plan())
    vi.mocked(api.worktree.merge).mockResolvedValue({merged: false, committed: 'c0ffee0011',
      conflict: {branch: 'shepherd/feat', base: 'main', files: ['src/a.go'], committed: 'c0ffee0011'}})
    vi.mocked(api.worktree.askToResolve).mockResolvedValue({conflicts: ['src/a.go'], status: 'queued', queuePosition: 2})
    const onClose = renderDialog()
    fireEvent.click(await screen.findByRole('button', {name: 'Commit and merge'}))
    expect(await screen.findByText('src/a.go')).toBeInTheDocument()
    expect(screen.getByText(/uncommitted work is committed on/)).toBeInTheDocument()
    expect(screen.getByRole('button', {name: 'Keep the branch'})).toBeEnabled()
    fireEvent.click(screen.getByRole('button', {name: 'Ask feat to merge main and resolve'}))
    await waitFor(() => expect(onClose).toHaveBeenCalled())
    expect(api.worktree.askToResolve).toHaveBeenCalledWith('p1', 'feat')
  })

  it('the agent merging its base: resolved is committed first, markers left block the merge', async () => {
    vi.mocked(api.worktree.plan).mockResolvedValue(plan({merging: true, uncommitted: [{path: 'a.go', status: 'conflicted'}],
      conflicts: ['a.go'], blocked: 'the conflicts in a.go are not resolved yet'}))
    renderDialog()
    expect(await screen.findByText(/still has\s+conflict markers in a.go/)).toBeInTheDocument()
    expect(screen.getByRole('button', {name: 'Commit and merge'})).toBeDisabled()
  })

  it('nothing to merge says so', async () => {
    vi.mocked(api.worktree.plan).mockResolvedValue(plan({uncommitted: [], ahead: 0, upToDate: true}))
    renderDialog()
    expect(await screen.findByText(/Nothing to merge: main has all of shepherd\/feat/)).toBeInTheDocument()
    expect(screen.getByRole('button', {name: 'Merge'})).toBeDisabled()
  })
})
