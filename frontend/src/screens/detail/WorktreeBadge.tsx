import type {Agent} from '../../api'
import {aheadBehind} from '../../lib/diff'

/** A worktree agent's branch, where it stands against its base, and what is wrong with it. */
export function WorktreeBadge({agent, onOpen}: {agent: Agent; onOpen?: () => void}) {
  const w = agent.workspace
  if (!w?.worktree) return null
  const base = w.base ?? ''
  const title = [
    `Runs in its own worktree ${w.path ?? ''}`,
    `on branch ${w.branch ?? ''} from ${base}`,
    `${aheadBehind(w.ahead ?? 0, w.behind ?? 0, base)}.`,
    w.dirty ? 'It has uncommitted changes.' : '',
    w.merging ? (w.conflicts?.length ? `Merging ${base} into it: conflicts left in ${w.conflicts.join(', ')}.` : `Merging ${base} into it: resolved, merge it to commit.`) : '',
    w.problem ?? '', w.warning ?? '',
  ].filter(Boolean).join('\n')
  return (
    <button type="button" className={`worktree-badge${w.problem ? ' bad' : w.warning ? ' warn' : ''}`} title={title}
      aria-label={`Worktree ${w.branch ?? ''}`} onClick={onOpen}>
      <span className="branch">⎇ {w.branch}</span>
      {w.problem
        ? <span className="problem">{w.problem}</span>
        : w.merging
          // The agent merging its base: that, not ahead/behind, is what matters now.
          ? (w.conflicts?.length
            ? <span className="warn-text">merging {base}: {w.conflicts.length} conflict{w.conflicts.length === 1 ? '' : 's'}</span>
            : <span className="muted">merging {base}: resolved, merge to commit</span>)
          : <span className="muted">{aheadBehind(w.ahead ?? 0, w.behind ?? 0, base)}{w.dirty ? ' · uncommitted' : ''}</span>}
    </button>
  )
}
