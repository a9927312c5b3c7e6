import {useState} from 'react'
import {useQuery, useQueryClient} from '@tanstack/react-query'
import {api, errorMessage, type Agent, type WorktreeEnd} from '../../api'
import {Confirm} from '../../components/Dialog'
import {aheadBehind} from '../../lib/diff'
import {isLive} from '../../lib/status'
import {keys} from '../../state/queries'

const CHOICES: {end: WorktreeEnd; label: string; explain: (branch: string, base: string) => string}[] = [
  {end: 'keep', label: 'Keep the branch', explain: (b) => `The worktree folder goes; ${b} stays, to merge or look at later.`},
  {end: 'merge', label: 'Merge into the base', explain: (b, base) =>
    `${b} is merged into ${base} in the project's checkout (a fast-forward, or a merge commit). A conflict stops it: nothing is lost.`},
  {end: 'discard', label: 'Discard', explain: (b) => `The worktree folder and ${b} are deleted, with every commit not merged.`},
]

/**
 * Removing a worktree agent: keep its branch, merge it, or discard it. Its
 * worktree is looked at first; uncommitted changes must be let go
 * explicitly (the engine refuses otherwise).
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
  const [deleteLog, setDeleteLog] = useState(false)
  const [loseChanges, setLoseChanges] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')
  const [dirtyNow, setDirtyNow] = useState(false) // the engine found changes the status had not
  const live = isLive(agent)
  const dirty = !!st?.dirty || dirtyNow
  const vanished = st?.problem || w.problem
  const remove = async () => {
    setBusy(true)
    setError('')
    try {
      await api.worktree.remove(agent.projectId, agent.id, {force: live, deleteLog, end, discardChanges: loseChanges})
      qc.setQueryData<Agent[]>(keys.agents(agent.projectId), (old) => old?.filter((a) => a.id !== agent.id))
      onRemoved()
    } catch (err) {
      const msg = errorMessage(err)
      if (/uncommitted changes/.test(msg)) setDirtyNow(true)
      setError(msg)
      setBusy(false)
    }
  }
  const label = {keep: 'Remove, keep branch', merge: 'Merge and remove', discard: 'Discard and remove'}[end]
  return (
    <Confirm title={`Remove ${agent.id}`} confirmLabel={live ? `Stop, ${label.toLowerCase()}` : label} danger={end === 'discard'}
      busy={busy || status.isPending || (dirty && !loseChanges)} onConfirm={() => void remove()} onClose={onClose}
      message={<>
        {live && <p><strong>{agent.id} is running.</strong> Removing it stops it first.</p>}
        <p>It works in its own worktree on <code>{branch}</code>
          {st && !vanished && <> — {aheadBehind(st.ahead, st.behind, base)}</>}.</p>
        {vanished && <p className="field-error">{vanished}</p>}
      </>}>
      <fieldset className="worktree-choices" aria-label="What becomes of its worktree">
        {CHOICES.map((c) => (
          <label key={c.end} className="choice">
            <input type="radio" name="worktree-end" value={c.end} checked={end === c.end} onChange={() => setEnd(c.end)}/>
            <span><strong>{c.label}</strong><span className="hint muted">{c.explain(branch, base)}</span></span>
          </label>
        ))}
      </fieldset>
      {dirty && (
        <div className="dirty-ask" role="alert">
          <p><strong>Its worktree has uncommitted changes.</strong> {end === 'merge'
            ? 'A merge takes only what is committed; the rest is lost with the folder.'
            : 'They are lost with the folder.'}</p>
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
      {status.error && <p className="field-error">Cannot look at its worktree: {errorMessage(status.error)}</p>}
      {error && <p className="field-error" role="alert">{error}</p>}
    </Confirm>
  )
}
