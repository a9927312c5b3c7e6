import {useEffect} from 'react'
import {Dialog} from '../../components/Dialog'
import {ago, exact} from '../../lib/time'
import {BAD, countsText, hasNews, markSeenAt, outcomeText, recoveryText, toShow} from '../../lib/whileClosed'
import {useProjects, useWhileClosed} from '../../state/queries'
import {useUI} from '../../state/ui'

/** Opens the while-closed summary once per engine start, on the first screen (when no other dialog is open). */
export function useShowWhileClosed() {
  const {data} = useWhileClosed()
  const dialog = useUI((s) => s.dialog)
  const open = useUI((s) => s.open)
  useEffect(() => {
    if (dialog || !data || !toShow(data)) return
    markSeenAt(data.at)
    open({kind: 'whileClosed'})
  }, [data, dialog, open])
}

/** "While Shepherd was closed": per project, every agent the engine's start found changed, in words. */
export function WhileClosedDialog() {
  const {data} = useWhileClosed()
  const projects = useProjects().data ?? []
  const {close, selectProject, selectAgent} = useUI()
  const name = (id: string) => projects.find((p) => p.id === id)?.name ?? id
  const show = (projectId: string, agentId: string) => {
    close()
    selectProject(projectId)
    selectAgent(agentId)
  }
  return (
    <Dialog title="While Shepherd was closed" onClose={close} wide>
      <div className="dialog-body while-closed">
        {!data
          ? <p className="muted">The engine is still looking at its projects…</p>
          : <p className="muted" title={exact(data.at)}>What Shepherd found when its engine started ({ago(data.at)}), in every project.</p>}
        {data && !hasNews(data) && <p>Nothing happened: every agent was as Shepherd left it.</p>}
        {data?.projects?.filter((p) => p.agents?.length || p.corrupt?.length).map((p) => (
          <section key={p.projectId} className="wc-project" data-while-closed={p.projectId}>
            <h3>{name(p.projectId)} <span className="muted">{countsText(p.counts)}</span></h3>
            <ul>
              {p.agents?.map((o) => (
                <li key={o.agentId} className={BAD.has(o.outcome) ? 'bad' : undefined} data-outcome={o.outcome}>
                  <button type="button" className="link wc-agent" title="Show this agent" onClick={() => show(p.projectId, o.agentId)}>{o.agentId}</button>
                  <span className="wc-outcome">{outcomeText(o)}</span>
                  {recoveryText(o) && <span className="wc-recovery">· {recoveryText(o)}</span>}
                  {o.detail && <span className="muted wc-detail" title={o.detail}>{o.detail}</span>}
                </li>
              ))}
              {p.corrupt?.map((c) => (
                <li key={`corrupt-${c.agentId}`} className="bad" data-outcome="corrupt">
                  <span className="wc-agent">{c.agentId}</span>
                  <span className="wc-outcome">unreadable record, moved aside</span>
                  <span className="muted wc-detail" title={`${c.problem}\n${c.movedTo}`}>{c.problem}</span>
                </li>
              ))}
            </ul>
          </section>
        ))}
      </div>
      <footer className="dialog-foot">
        <span className="muted hint">Also in the activity feed (the bell).</span>
        <button type="button" className="primary" onClick={close}>OK</button>
      </footer>
    </Dialog>
  )
}
