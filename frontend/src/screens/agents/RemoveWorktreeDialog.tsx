import {useState} from 'react'
import {useQuery, useQueryClient} from '@tanstack/react-query'
import {api, errorMessage, type Agent, type MergeConflict, type WorktreeEnd} from '../../api'
import {Confirm} from '../../components/Dialog'
import {aheadBehind} from '../../lib/diff'
import {isLive} from '../../lib/status'
import {keys} from '../../state/queries'
import {askToResolve, mergePlanKey} from './MergeDialog'
import {ConflictWays, MergePlanView} from './MergeParts'

const CHOICES: {end: WorktreeEnd; label: string; explain: (branch: string, base: string) => string}[] = [
  {end: 'keep', label: 'Keep the branch', explain: (b) => `The worktree folder goes; ${b} stays, to merge or look at later.`},
  {end: 'merge', label: 'Merge into the base', explain: (b, base) =>
    `What the Diff shows is merged into ${base} in the project's checkout: the uncommitted work is committed first on ${b}, then merged (a fast-forward, or a merge commit). A conflict stops it: nothing is lost.`},
  {end: 'discard', label: 'Discard', explain: (b) => `The worktree folder and ${b} are deleted, with every commit not merged.`},
]

/**
 * Removing a worktree agent: keep its branch, merge it, or discard it. Its
 * worktree is looked at first. A merge takes the uncommitted changes
 * (committed first, with a message the user can edit); keeping or
 * discarding the folder loses them, which must be let go explicitly. A
 * merge that conflicts keeps the agent and offers the two ways out.
 */
export function RemoveWorktreeDialog({agent, onRemoved, onClose}: {agent: Agent; onRemoved: () => void; onClose: () => void}) {
  const qc = useQueryClient()
  const w = agent.workspace!
  const branch = w.branch ?? `shepherd/${agent.id}`
  const base = w.base ?? 'the base'
  const status = useQuery({queryKey: ['worktreeStatus', agent.projectId, agent.id],
    queryFn: () => api.worktree.refresh(agent.projectId, agent.id), retry: false, staleTime: 0})
  const st = status.data?.status
  const [end, setEnd] = useState<WorktreeEnd>('keep')
  const plan = useQuery({queryKey: mergePlanKey(agent.projectId, agent.id), enabled: end === 'merge',
    queryFn: () => api.worktree.plan(agent.projectId, agent.id), retry: false, staleTime: 0})
  const [edited, setEdited] = useState<string | null>(null)
  const [deleteLog, setDeleteLog] = useState(false)
  const [loseChanges, setLoseChanges] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')
  const [dirtyNow, setDirtyNow] = useState(false) // the engine found changes the status had not
  const [conflict, setConflict] = useState<MergeConflict | null>(null)
  const live = isLive(agent)
  const dirty = !!st?.dirty || dirtyNow
  const vanished = st?.problem || w.problem
  const message = edited ?? plan.data?.message ?? ''
  // A live agent is stopped first: only what else stands in the way counts.
  const blocked = plan.data?.blocked
  const removeAs = async (how: WorktreeEnd) => {
    await api.worktree.remove(agent.projectId, agent.id, {force: live, deleteLog, end: how, discardChanges: how !== 'merge' && loseChanges})
    qc.setQueryData<Agent[]>(keys.agents(agent.projectId), (old) => old?.filter((a) => a.id !== agent.id))
    onRemoved()
  }
  const remove = async () => {
    setBusy(true)
    setError('')
    try {
      if (end === 'merge') {
        // Merged first, keeping the agent: a conflict leaves it, with its ways out.
        if (live) await api.agents.stop(agent.projectId, agent.id)
        const res = await api.worktree.merge(agent.projectId, agent.id, message)
        if (res.conflict) {
          setConflict(res.conflict)
          setBusy(false)
          return
        }
      }
      await removeAs(end)
    } catch (err) {
      const msg = errorMessage(err)
      if (/uncommitted changes/.test(msg)) setDirtyNow(true)
      setError(msg)
      setBusy(false)
    }
  }
  const run = (f: () => Promise<void>) => async () => {
    setBusy(true)
    setError('')
    try {
      await f()
    } catch (err) {
      setError(errorMessage(err))
      setBusy(false)
    }
  }
  const label = {keep: 'Remove, keep branch', merge: 'Merge and remove', discard: 'Discard and remove'}[end]
  const asksToLose = dirty && end !== 'merge'
  return (
    <Confirm title={`Remove ${agent.id}`} confirmLabel={live ? `Stop, ${label.toLowerCase()}` : label} danger={end === 'discard'}
      busy={busy || !!conflict || status.isPending || (asksToLose && !loseChanges) || (end === 'merge' && (plan.isPending || !!blocked))}
      onConfirm={() => void remove()} onClose={onClose}
      message={<>
        {live && <p><strong>{agent.id} is running.</strong> Removing it stops it first.</p>}
        <p>It works in its own worktree on <code>{branch}</code>
          {st && !vanished && <> — {aheadBehind(st.ahead, st.behind, base)}</>}.</p>
        {vanished && <p className="field-error">{vanished}</p>}
      </>}>
      {conflict
        ? <ConflictWays agent={agent} conflict={conflict} repo={plan.data?.repo ?? w.repo ?? ''} busy={busy}
            keepLabel="Remove it, keep the branch" onKeep={() => void run(() => removeAs('keep'))()}
            onAsk={() => void run(async () => {
              await askToResolve(agent)
              onClose()
            })()}/>
        : <>
            <fieldset className="worktree-choices" aria-label="What becomes of its worktree">
              {CHOICES.map((c) => (
                <label key={c.end} className="choice">
                  <input type="radio" name="worktree-end" value={c.end} checked={end === c.end} onChange={() => setEnd(c.end)}/>
                  <span><strong>{c.label}</strong><span className="hint muted">{c.explain(branch, base)}</span></span>
                </label>
              ))}
            </fieldset>
            {end === 'merge' && plan.data && <MergePlanView plan={plan.data} message={message} onMessage={setEdited}/>}
            {end === 'merge' && plan.data?.upToDate && <p className="muted">Nothing to merge: {base} has all of {branch}.</p>}
            {end === 'merge' && blocked && <p className="field-error" role="alert">{blocked}</p>}
            {end === 'merge' && plan.error && <p className="field-error">Cannot look at the merge: {errorMessage(plan.error)}</p>}
            {asksToLose && (
              <div className="dirty-ask" role="alert">
                <p><strong>Its worktree has uncommitted changes.</strong> They are lost with the folder (a merge would commit them).</p>
                <label className="check">
                  <input type="checkbox" checked={loseChanges} onChange={(e) => setLoseChanges(e.target.checked)}/>
                  Lose the uncommitted changes
                </label>
              </div>
            )}
            <label className="check">
              <input type="checkbox" checked={deleteLog} onChange={(e) => setDeleteLog(e.target.checked)}/>
              Also delete its log
            </label>
          </>}
      {status.error && <p className="field-error">Cannot look at its worktree: {errorMessage(status.error)}</p>}
      {error && <p className="field-error" role="alert">{error}</p>}
    </Confirm>
  )
}
