import {useLayoutEffect, useRef, useState, type RefObject} from 'react'
import type {Agent, Project} from '../../api'
import {costOf} from '../../lib/groups'
import {loadText} from '../../lib/pause'
import {dailyText} from '../../lib/budget'
import {attentionText, exactMoney} from '../../lib/usage'
import {useCostToday} from '../../state/queries'

interface Props {
  project: Project
  agents: readonly Agent[]
  /** Agents in "Needs you". */
  attention: number
  /** Some agent of the project reports what its runs cost. */
  costs: boolean
}

/**
 * Whether the load ("3/4 running · 2 queued") has room in the header: when
 * the header would cut it, it goes whole (rather than leave a stray "0"), and
 * comes back once the header is wide enough again for all of it.
 */
function useRoomFor(ref: RefObject<HTMLElement | null>, text: string): boolean {
  const [gone, setGone] = useState(false)
  const goneAt = useRef(0) // the title's width when it went
  const natural = useRef(0) // its width whole
  useLayoutEffect(() => setGone(false), [text]) // new words: try them
  useLayoutEffect(() => {
    const el = ref.current
    const title = el?.closest<HTMLElement>('.title')
    if (!el || !title || typeof ResizeObserver === 'undefined') return
    const check = () => {
      if (!gone) {
        natural.current = el.scrollWidth
        if (el.clientWidth < el.scrollWidth - 1) {
          goneAt.current = title.clientWidth
          setGone(true)
        }
      } else if (title.clientWidth >= goneAt.current + natural.current + 12) {
        setGone(false)
      }
    }
    const ro = new ResizeObserver(check)
    ro.observe(title)
    ro.observe(el)
    check()
    return () => ro.disconnect()
  }, [ref, gone])
  return !gone
}

/** The project's line in the header: running (of the limit) and queued, what needs you, and today's cost. */
export function ProjectSummary({project, agents, attention, costs}: Props) {
  const today = useCostToday(project)
  const load = useRef<HTMLSpanElement>(null)
  const roomy = useRoomFor(load, loadText(project))
  const total = project.totals?.costUsd ??
    agents.reduce<number | undefined>((sum, a) => (costOf(a) == null ? sum : (sum ?? 0) + costOf(a)!), undefined)
  return (
    <span className="summary" data-summary>
      <span ref={load} className={['load', project.paused && 'paused', !roomy && 'gone'].filter(Boolean).join(' ')} data-load
        title={`${loadText(project)}\n` + (project.maxRunning ? `At most ${project.maxRunning} agents run at once; more starts wait in the queue (project settings)` : 'No limit on agents running at once (project settings)')}>
        {loadText(project)}
      </span>
      {attention > 0 && <span className="attn" data-attention={attention} title="Agents in “Needs you”: waiting for you, failed, crash-looping, interrupted, silent or unable to start (Acknowledge clears one)">{attentionText(attention)}</span>}
      {(costs || today > 0 || !!project.dailyBudgetUsd) && (
        <span className={project.budgetHeld ? 'cost-today over' : 'cost-today'} data-cost-today={today.toFixed(4)}
          title={`${dailyText(project, today)}\nWhat this project's agents reported their runs cost today (local time)${total != null ? `; ${exactMoney(total)} in all` : ''}${
            project.budgetHeld ? '. The daily budget is reached: its agents are paused and starts wait until it is raised (settings) or the day ends.' : ''}`}>
          {project.budgetHeld && project.dailyBudgetUsd
            // The words stay whole; the dollars give way first in a narrow header (whole on hover).
            ? <><span className="held">daily budget reached</span><span className="amounts">{dailyText(project, today).replace(/^daily budget reached/, '')}</span></>
            : dailyText(project, today)}
        </span>
      )}
    </span>
  )
}
