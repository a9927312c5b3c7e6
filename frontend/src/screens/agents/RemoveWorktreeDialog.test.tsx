import {fireEvent, render, screen, waitFor} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api} from '../../api'
import {agent} from '../../test/fixtures'
import {RemoveWorktreeDialog} from './RemoveWorktreeDialog'

vi.mock('../../api', async (orig) => {
  const real = await orig<typeof import('../../api')>()
  return {...real, api: {worktree: {refresh: vi.fn(), remove: vi.fn()}}}
})

const wt = agent({id: 'feat', status: 'completed', workspace: {worktree: true, base: 'main', branch: 'shepherd/feat', path: '/wt/feat'}})
const status = (dirty: boolean, ahead = 2) =>
  ({projectId: 'p1', agentId: 'feat', status: {branch: 'shepherd/feat', base: 'main', ahead, behind: 0, dirty}})

function renderDialog() {
  const onRemoved = vi.fn()
  render(<QueryClientProvider client={new QueryClient()}>
    <RemoveWorktreeDialog agent={wt} onRemoved={onRemoved} onClose={() => {}}/>
  </QueryClientProvider>)
  return onRemoved
}

beforeEach(() => vi.clearAllMocks())

describe('RemoveWorktreeDialog', () => {
  it('offers keep, merge and discard, and removes as chosen', async () => {
    vi.mocked(api.worktree.refresh).mockResolvedValue(status(false))
    vi.mocked(api.worktree.remove).mockResolvedValue(undefined)
    const onRemoved = renderDialog()
    expect(await screen.findByText(/2 ahead of main/)).toBeInTheDocument()
    const radios = screen.getAllByRole('radio')
    expect(radios.map((r) => (r as HTMLInputElement).value)).toEqual(['keep', 'merge', 'discard'])
    expect(radios[0]).toBeChecked()
    fireEvent.click(screen.getByRole('radio', {name: /Merge into the base/}))
    fireEvent.click(screen.getByRole('button', {name: 'Merge and remove'}))
    await waitFor(() => expect(onRemoved).toHaveBeenCalled())
    expect(api.worktree.remove).toHaveBeenCalledWith('p1', 'feat', {force: false, deleteLog: false, end: 'merge', discardChanges: false})
  })

  it('a dirty worktree asks before its changes go', async () => {
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

  it('reports a conflict and stays open; changes found at remove time ask too', async () => {
    vi.mocked(api.worktree.refresh).mockResolvedValue(status(false))
    vi.mocked(api.worktree.remove).mockRejectedValue(
      "agent 'feat': merging shepherd/feat into main conflicts in a.go; the merge was aborted, the worktree and the branch are kept")
    const onRemoved = renderDialog()
    await screen.findByText(/2 ahead of main/)
    fireEvent.click(screen.getByRole('radio', {name: /Merge into the base/}))
    fireEvent.click(screen.getByRole('button', {name: 'Merge and remove'}))
    expect(await screen.findByText(/conflicts in a.go; the merge was aborted/)).toBeInTheDocument()
    expect(onRemoved).not.toHaveBeenCalled()

    vi.mocked(api.worktree.remove).mockRejectedValue("agent 'feat': worktree /wt/feat has uncommitted changes, which removing it loses")
    fireEvent.click(screen.getByRole('button', {name: 'Merge and remove'}))
    expect(await screen.findByRole('checkbox', {name: 'Lose the uncommitted changes'})).toBeInTheDocument()
    expect(screen.getByRole('button', {name: 'Merge and remove'})).toBeDisabled()
  })
})
