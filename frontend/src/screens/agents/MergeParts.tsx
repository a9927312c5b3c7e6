import type {Agent, MergeConflict, MergePlan} from '../../api'
import {STATUS_MARK} from '../../lib/diff'

const plural = (n: number, one: string, many = one + 's') => `${n} ${n === 1 ? one : many}`

/**
 * What a merge commits first — the uncommitted files, as whom — and the
 * commit message, editable. A merge takes what the Diff shows: nothing of
 * it is lost.
 */
export function MergePlanView({plan, message, onMessage}: {plan: MergePlan; message: string; onMessage: (m: string) => void}) {
  const files = plan.uncommitted ?? []
  const commits = files.length > 0 || plan.merging
  return (
    <div className="merge-plan">
      {plan.merging && (plan.conflicts?.length
        ? <p className="warn-text">The agent's merge of <code>{plan.base}</code> into <code>{plan.branch}</code> still has
            conflict markers in {plan.conflicts.join(', ')}.</p>
        : <p>The agent's merge of <code>{plan.base}</code> into <code>{plan.branch}</code> is resolved: it is committed first.</p>)}
      {files.length > 0
        ? <>
            <p><strong>{plural(files.length, 'uncommitted change')}</strong> {files.length === 1 ? 'is' : 'are'} committed
              first on <code>{plan.branch}</code>{plan.identity ? <>, as {plan.identity}</> : null}:</p>
            <ul className="merge-files" aria-label="What is committed first">
              {files.map((c) => (
                <li key={c.path} title={`${c.status}: ${c.path}`}>
                  <span className={`mark st-${c.status}`}>{STATUS_MARK[c.status] ?? '?'}</span>
                  <span className="diff-path">{c.path}</span>
                </li>
              ))}
            </ul>
          </>
        : !plan.merging && !plan.upToDate && <p className="muted">Nothing is uncommitted: the branch's commits are merged as they are.</p>}
      {commits && (
        <label className="merge-message">Commit message
          <textarea name="message" rows={4} value={message} onChange={(e) => onMessage(e.target.value)} spellCheck={false}/>
        </label>
      )}
    </div>
  )
}

/**
 * A merge that conflicted: the files, that nothing was lost, and the two
 * ways out — keep the branch and resolve by hand, or ask the agent.
 */
export function ConflictWays({agent, conflict, repo, keepLabel, busy, onKeep, onAsk}: {
  agent: Agent; conflict: MergeConflict; repo: string; keepLabel: string; busy: boolean; onKeep: () => void; onAsk: () => void
}) {
  const files = conflict.files ?? []
  return (
    <div className="merge-conflict">
      <div className="conflict-box" role="alert">
        <p><strong>Merging <code>{conflict.branch}</code> into <code>{conflict.base}</code> conflicts</strong> in {plural(files.length, 'file')}:</p>
        <ul className="merge-files">
          {files.map((f) => <li key={f}><span className="mark st-conflicted">!</span><span className="diff-path">{f}</span></li>)}
        </ul>
        <p>The merge was aborted: nothing is lost. Your checkout is as it was{conflict.committed
          ? <>, and the uncommitted work is committed on <code>{conflict.branch}</code> ({conflict.committed.slice(0, 8)})</> : null}.</p>
      </div>
      <p className="ways-title">Two ways out:</p>
      <div className="merge-ways">
        <div className="way">
          <button type="button" onClick={onKeep} disabled={busy}>{keepLabel}</button>
          <span className="hint muted">Resolve it by hand: <code>git merge {conflict.branch}</code> in {repo || 'the project'}.</span>
        </div>
        <div className="way">
          <button type="button" className="primary" onClick={onAsk} disabled={busy}>Ask {agent.id} to merge {conflict.base} and resolve</button>
          <span className="hint muted">{conflict.base} is merged into its branch in its worktree, and {agent.id} resumes with an
            instruction naming the files. Merge again when it is done: its resolution is committed then.</span>
        </div>
      </div>
    </div>
  )
}
