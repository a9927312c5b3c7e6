import {useEffect, useId, useMemo, useRef, useState} from 'react'
import {useQuery, useQueryClient} from '@tanstack/react-query'
import {useVirtualizer} from '@tanstack/react-virtual'
import {api, errorMessage, EVENTS, onEvent, type Agent} from '../../api'
import {diffRows, fileKind, STATUS_MARK, type DiffRow} from '../../lib/diff'
import {isLive} from '../../lib/status'
import {MergeDialog} from '../agents/MergeDialog'

export const DIFF_ROW = 18
const FILE_ROW = 22

export const diffKey = (projectId: string, agentId: string) => ['diff', projectId, agentId] as const

/**
 * A worktree agent's changes against its base: the changed files with +/−
 * on the left, every file's hunks on the right (both lists virtualised, so
 * a diff of thousands of files stays quick). Loaded again when the agent's
 * run ends, when its worktree or base changes (agent:worktree) or on
 * Refresh. What it shows is what Merge merges (the uncommitted work
 * committed first).
 */
export function DiffView({agent}: {agent: Agent}) {
  const qc = useQueryClient()
  const key = diffKey(agent.projectId, agent.id)
  const diff = useQuery({queryKey: key, queryFn: () => api.worktree.diff(agent.projectId, agent.id), retry: false})
  const [refreshing, setRefreshing] = useState(false)
  const [refreshError, setRefreshError] = useState('')
  const [merging, setMerging] = useState(false)
  useEffect(() => onEvent(EVENTS.agentWorktree, (v) => {
    if (v.projectId === agent.projectId && v.agentId === agent.id) void qc.invalidateQueries({queryKey: key})
  }), [agent.projectId, agent.id]) // eslint-disable-line react-hooks/exhaustive-deps
  const refresh = async () => {
    setRefreshing(true)
    setRefreshError('')
    try {
      await api.worktree.refresh(agent.projectId, agent.id)
    } catch (err) {
      setRefreshError(errorMessage(err))
    }
    await qc.invalidateQueries({queryKey: key})
    setRefreshing(false)
  }
  const {rows, starts} = useMemo(() => diffRows(diff.data), [diff.data])
  const files = diff.data?.files ?? []
  const body = useRef<HTMLDivElement>(null)
  const list = useRef<HTMLDivElement>(null)
  const vb = useVirtualizer({count: rows.length, getScrollElement: () => body.current, estimateSize: () => DIFF_ROW,
    overscan: 20, initialRect: {width: 800, height: 400}})
  const vf = useVirtualizer({count: files.length, getScrollElement: () => list.current, estimateSize: () => FILE_ROW,
    overscan: 10, initialRect: {width: 260, height: 400}})
  const [selected, setSelected] = useState(0)
  const open = (n: number) => {
    setSelected(n)
    vb.scrollToIndex(starts[n], {align: 'start'})
  }
  const d = diff.data
  const ids = useId()
  // The files by keyboard: the list is one Tab stop, ↑ ↓ Home End Page Up/Down choose a file (as a click does).
  const onFilesKey = (e: React.KeyboardEvent) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey || !files.length) return
    const to = ({ArrowDown: selected + 1, ArrowUp: selected - 1, Home: 0, End: files.length - 1,
      PageDown: selected + 10, PageUp: selected - 10} as Record<string, number>)[e.key]
    if (to === undefined) return
    e.preventDefault() // not the agents list's ↑ ↓
    const n = Math.max(0, Math.min(files.length - 1, to))
    open(n)
    vf.scrollToIndex(n)
  }

  return (
    <div className="diffview">
      <div className="diff-bar" aria-live="polite">
        {diff.isPending ? 'Loading the diff…'
          : diff.error ? <span className="field-error">{errorMessage(diff.error)}</span>
          : d && <>
              <strong>{files.length} file{files.length === 1 ? '' : 's'} changed</strong>
              <span className="plus">+{d.added}</span><span className="minus">−{d.deleted}</span>
              <span className="muted">against {d.base} ({d.from.slice(0, 8)}), uncommitted changes included</span>
              {d.truncated && <span className="warn-text">too large: hunks left out</span>}
            </>}
        {refreshError && <span className="field-error">{refreshError}</span>}
        <button type="button" className="diff-refresh" onClick={() => void refresh()} disabled={refreshing}>
          {refreshing ? 'Refreshing…' : 'Refresh'}
        </button>
        <button type="button" className="diff-merge" onClick={() => setMerging(true)} disabled={isLive(agent) || !!agent.workspace?.problem}
          title={isLive(agent) ? 'It is running: merge when its run has ended' : `Commit what is not committed and merge into ${agent.workspace?.base ?? 'the base'}`}>
          Merge…
        </button>
      </div>
      {merging && <MergeDialog agent={agent} onClose={() => setMerging(false)}/>}
      {d && files.length === 0 && <p className="muted log-empty">No changes against {d.base} yet.</p>}
      {files.length > 0 && (
        <div className="diff-panes">
          <div ref={list} className="diff-files" role="listbox" aria-label="Changed files" tabIndex={0}
            aria-activedescendant={`${ids}-${Math.min(selected, files.length - 1)}`} onKeyDown={onFilesKey}>
            <div style={{height: vf.getTotalSize(), position: 'relative'}}>
              {vf.getVirtualItems().map((vr) => {
                const f = files[vr.index]
                return (
                  <div key={vr.index} id={`${ids}-${vr.index}`} role="option" aria-selected={vr.index === selected} className="diff-file"
                    title={f.oldPath ? `${f.oldPath} → ${f.path}` : f.path} onClick={() => open(vr.index)}
                    style={{position: 'absolute', top: 0, left: 0, right: 0, height: FILE_ROW, transform: `translateY(${vr.start}px)`}}>
                    <span className={`mark st-${f.status}`}>{STATUS_MARK[f.status] ?? '?'}</span>
                    <span className="diff-path">{f.path}</span>
                    {fileKind(f.mode) && <span className="muted">{fileKind(f.mode)}</span>}
                    {f.note && !f.added ? <span className="muted" title={f.note}>–</span> : f.binary ? <span className="muted">bin</span>
                      : <><span className="plus">+{f.added}</span><span className="minus">−{f.deleted}</span></>}
                  </div>
                )
              })}
            </div>
          </div>
          <div ref={body} className="diff-body" role="region" aria-label="Diff" tabIndex={0}>
            <div style={{height: vb.getTotalSize(), position: 'relative', minWidth: '100%'}}>
              {vb.getVirtualItems().map((vr) => (
                <div key={vr.index} className={rowClass(rows[vr.index])}
                  style={{position: 'absolute', top: 0, left: 0, minWidth: '100%', height: DIFF_ROW, transform: `translateY(${vr.start}px)`}}>
                  <Row row={rows[vr.index]}/>
                </div>
              ))}
            </div>
          </div>
        </div>
      )}
    </div>
  )
}

function rowClass(r: DiffRow): string {
  switch (r.kind) {
    case 'file': return 'diff-row diff-file-head'
    case 'hunk': return 'diff-row diff-hunk'
    case 'note': return 'diff-row diff-note'
    case 'line': return `diff-row diff-line ${r.op === '+' ? 'add' : r.op === '-' ? 'del' : 'ctx'}`
  }
}

function Row({row}: {row: DiffRow}) {
  switch (row.kind) {
    case 'file':
      return <>
        <span className="diff-path">{row.file.oldPath ? `${row.file.oldPath} → ${row.file.path}` : row.file.path}</span>
        <span className="muted"> {row.file.status}{fileKind(row.file.mode) && ` ${fileKind(row.file.mode)}`}</span>
        {!row.file.binary && <> <span className="plus">+{row.file.added}</span> <span className="minus">−{row.file.deleted}</span></>}
      </>
    case 'hunk':
      return <>{row.header}</>
    case 'note':
      return <>{row.text}</>
    case 'line':
      return <>
        <span className="ln">{row.oldNo ?? ''}</span><span className="ln">{row.newNo ?? ''}</span>
        <span className="op">{row.op}</span>{row.text}
      </>
  }
}
