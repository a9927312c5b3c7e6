import {useQuery} from '@tanstack/react-query'
import {api} from '../../api'

/** The form's worktree values. */
export interface WorktreeValues {
  /** Run the agent in a git worktree of its own (made at create). */
  worktree: boolean
  /** The branch to start from; empty: the project's current branch. */
  base: string
}

export const NO_WORKTREE: WorktreeValues = {worktree: false, base: ''}

/** Whether the project is a git repository, so that a preset agent gets a worktree unless unticked. */
export function useWorktreeDefault(projectId: string): boolean {
  return useQuery({queryKey: ['worktreeDefault', projectId], queryFn: () => api.worktree.byDefault(projectId),
    staleTime: 60_000, retry: false}).data ?? false
}

interface Props {
  values: WorktreeValues
  onChange: (patch: Partial<WorktreeValues>) => void
  /** Editing: the worktree was made at create and stays as it is. */
  editing?: {branch?: string | null; path?: string | null}
  error?: React.ReactNode
}

/** Its own git worktree: opt in, and the base to start from. */
export function WorktreeFields({values: v, onChange, editing, error}: Props) {
  if (editing) {
    if (!v.worktree) return null
    return (
      <p className="hint muted worktree-fixed">
        Runs in its own worktree on <code>{editing.branch}</code> ({editing.path}); it stays as it is until the agent is removed.
      </p>
    )
  }
  return (
    <div className="worktree-fields">
      <label className="check">
        <input type="checkbox" name="worktree" checked={v.worktree} onChange={(e) => onChange({worktree: e.target.checked})}/>
        Own git worktree
      </label>
      <span className="hint muted">
        A branch <code>shepherd/&lt;id&gt;</code> checked out in a folder of its own, so that agents on one repository do not
        overwrite each other. Its diff shows in the detail; on remove you keep, merge or discard the branch.
      </span>
      {v.worktree && (
        <label>Base <span className="hint">(branch or commit to start from; empty: the project’s current branch)</span>
          <input name="base" value={v.base} placeholder="main" onChange={(e) => onChange({base: e.target.value})}/>
        </label>
      )}
      {error}
    </div>
  )
}
