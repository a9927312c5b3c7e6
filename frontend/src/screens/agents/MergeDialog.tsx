import {useState} from 'react'
import {useQuery, useQueryClient} from '@tanstack/react-query'
import {toast} from 'sonner'
import {api, errorMessage, type Agent, type MergeConflict} from '../../api'
import {Dialog} from '../../components/Dialog'
import {aheadBehind} from '../../lib/diff'
import {ConflictWays, MergePlanView} from './MergeParts'

export const mergePlanKey = (projectId: string, agentId: string) => ['mergePlan', projectId, agentId] as const

/** Asks the agent to resolve, and says what came of it. */
export async function askToResolve(agent: Agent) {
  const r = await api.worktree.askToResolve(agent.projectId, agent.id)
  if (r.clean) {
    toast.success(`The base merged into ${agent.id}'s branch without a conflict`, {description: 'Nothing to resolve: merge it now.'})
    return
  }
  const queued = r.status === 'queued'
  toast.success(`Asked ${agent.id} to resolve ${r.conflicts?.join(', ')}`, {
    description: queued ? `It is queued (position ${r.queuePosition ?? '?'}); merge again when it is done.`
      : 'It resumes in its session with that instruction; merge again when it is done.'})
}

/**
 * Merge a worktree agent into its base, keeping the agent: what the Diff
 * shows is merged — the uncommitted work committed first with a message the
 * user can edit, as their own git identity. A conflict is aborted (nothing
 * lost) and offers its two ways out.
 */
export function MergeDialog({agent, onClose}: {agent: Agent; onClose: () => void}) {
  const qc = useQueryClient()
  const plan = useQuery({queryKey: mergePlanKey(agent.projectId, agent.id),
    queryFn: () => api.worktree.plan(agent.projectId, agent.id), retry: false, staleTime: 0})
  const [edited, setEdited] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')
  const [conflict, setConflict] = useState<MergeConflict | null>(null)
  const p = plan.data
  const message = edited ?? p?.message ?? ''
  const base = p?.base ?? agent.workspace?.base ?? 'the base'
  const done = () => {
    void qc.invalidateQueries({queryKey: ['diff', agent.projectId, agent.id]})
    void qc.invalidateQueries({queryKey: mergePlanKey(agent.projectId, agent.id)})
  }
  const merge = async () => {
    setBusy(true)
    setError('')
    try {
      const res = await api.worktree.merge(agent.projectId, agent.id, message)
      done()
      if (res.conflict) {
        setConflict(res.conflict)
      } else {
        toast.success(res.upToDate ? `Nothing to merge: ${base} has ${agent.id}'s work` : `Merged ${agent.id} into ${base}`,
          {description: res.committed ? `Its uncommitted work was committed first (${res.committed.slice(0, 8)}).` : undefined})
        onClose()
      }
    } catch (err) {
      setError(errorMessage(err))
    }
    setBusy(false)
  }
  const ask = async () => {
    setBusy(true)
    setError('')
    try {
      await askToResolve(agent)
      done()
      onClose()
    } catch (err) {
      setError(errorMessage(err))
      setBusy(false)
    }
  }
  const keep = () => {
    toast(`${agent.id}'s work stays on ${conflict?.branch}`, {description: `Merge it by hand in ${p?.repo ?? 'the project'}: git merge ${conflict?.branch}`})
    onClose()
  }
  const blocked = p?.blocked || p?.running
  return (
    <Dialog title={`Merge ${agent.id} into ${base}`} onClose={onClose} wide>
      <div className="dialog-body">
        {plan.isPending && <p className="muted">Looking at its worktree…</p>}
        {plan.error && <p className="field-error">Cannot look at its worktree: {errorMessage(plan.error)}</p>}
        {p && <p><code>{p.branch}</code> into <code>{p.base}</code> in {p.repo} — {aheadBehind(p.ahead, p.behind, p.base)}.</p>}
        {p && !conflict && <MergePlanView plan={p} message={message} onMessage={setEdited}/>}
        {p && !conflict && blocked && <p className="field-error" role="alert">{blocked}</p>}
        {p && !conflict && p.upToDate && <p className="muted">Nothing to merge: {p.base} has all of {p.branch}.</p>}
        {conflict && <ConflictWays agent={agent} conflict={conflict} repo={p?.repo ?? ''} keepLabel="Keep the branch" busy={busy}
          onKeep={keep} onAsk={() => void ask()}/>}
        {error && <p className="field-error" role="alert">{error}</p>}
      </div>
      <footer className="dialog-foot">
        <button type="button" onClick={onClose}>{conflict ? 'Close' : 'Cancel'}</button>
        {!conflict && (
          <button type="button" className="primary" disabled={busy || !p || !!blocked || p.upToDate} onClick={() => void merge()}>
            {busy ? 'Merging…' : (p?.uncommitted?.length || p?.merging) ? 'Commit and merge' : 'Merge'}
          </button>
        )}
      </footer>
    </Dialog>
  )
}
