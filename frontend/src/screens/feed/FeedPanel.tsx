import {useEffect, useId, useMemo, useRef, useState} from 'react'
import type {Project} from '../../api'
import {arrowFocus, giveFocusBack} from '../../components/focus'
import {BellIcon} from '../../components/Icons'
import {tabPanel, Tabs} from '../../components/Tabs'
import {mergeFeeds, unread, type FeedEntry} from '../../lib/feed'
import {ago, exact, parseTime} from '../../lib/time'
import {hasNews} from '../../lib/whileClosed'
import {useFeeds, useProjects, useWhileClosed} from '../../state/queries'
import {useUI} from '../../state/ui'

const ICON: Record<FeedEntry['level'], string> = {error: '✖', warning: '⚠', success: '✔', info: '•'}

/** Unread counts: this project's and every project's. */
function useUnread(projects: readonly Project[], projectId: string) {
  const feeds = useFeeds(projects)
  const seen = useUI((s) => s.seen) // re-render when marked seen
  const seenOf = useUI((s) => s.seenOf)
  return useMemo(() => {
    let all = 0
    let here = 0
    for (const f of feeds) {
      const n = unread(f.entries, seenOf(f.projectId))
      all += n
      if (f.projectId === projectId) here = n
    }
    return {all, here, feeds}
  }, [feeds, seen, seenOf, projectId]) // eslint-disable-line react-hooks/exhaustive-deps
}

/** The bell: the activity feed's unread count, in this project and in all of them. */
export function Bell({projectId}: {projectId: string}) {
  const projects = useProjects().data ?? []
  const {all, here} = useUnread(projects, projectId)
  const {feedOpen, setFeedOpen} = useUI()
  const label = `Activity: ${here} new in this project, ${all} in all projects`
  return (
    <button type="button" className={all ? 'bell has-unread' : 'bell'} aria-label={label} title={label}
      aria-pressed={feedOpen} onClick={() => setFeedOpen(!feedOpen)}>
      <BellIcon/>
      {all > 0 && <span className="bell-count" data-unread={all}>{all > 99 ? '99+' : all}</span>}
    </button>
  )
}

/**
 * Every notification and recovery, persisted in events.jsonl: for this
 * project or all of them. A feed (WAI-ARIA) of entries: opening it takes the
 * focus to its first entry, ↑ ↓ Page Up/Down Home End move among them, Enter
 * shows an entry's agent; closing it gives the focus back to the bell.
 */
export function FeedPanel() {
  const projects = useProjects().data ?? []
  const {projectId, setFeedOpen, selectProject, selectAgent, markSeen, seenOf, open} = useUI()
  const closed = useWhileClosed().data
  const [scope, setScope] = useState<'project' | 'all'>('project')
  const {here, all, feeds} = useUnread(projects, projectId ?? '')
  const names = new Map(projects.map((p) => [p.id, p.name]))
  const shownIds = scope === 'all' ? projects.map((p) => p.id) : projectId ? [projectId] : []
  const entries = mergeFeeds(feeds.filter((f) => shownIds.includes(f.projectId)).map((f) => f.entries)).slice(0, 300)
  // What was new when the feed opened stays marked while it is open.
  const [before] = useState(() => new Map(projects.map((p) => [p.id, seenOf(p.id)])))
  const newest = entries.length ? parseTime(entries[0].time) ?? 0 : 0
  useEffect(() => {
    if (shownIds.length) markSeen(shownIds, Math.max(Date.now(), newest))
  }, [scope, newest]) // eslint-disable-line react-hooks/exhaustive-deps

  const go = (f: FeedEntry) => {
    if (!f.agentId) return
    if (f.projectId !== projectId) selectProject(f.projectId)
    selectAgent(f.agentId)
  }

  // The focus comes in when it opens and goes back (to the bell) when it closes, if it was inside.
  const panel = useRef<HTMLElement>(null)
  const [opener] = useState(() => document.activeElement)
  useEffect(() => {
    const box = panel.current
    ;(box?.querySelector<HTMLElement>('[role="article"]') ?? box?.querySelector<HTMLElement>('[role="tab"][tabindex="0"]'))?.focus()
    return () => giveFocusBack(opener)
  }, [opener])
  // The entry in the Tab order: the one the focus was last on (else the first).
  const [current, setCurrent] = useState<string | null>(null)
  const entry = entries.some((f) => f.key === current) ? current : entries[0]?.key
  const ids = useId()

  return (
    <aside ref={panel} className="feed" aria-label="Activity">
      <header className="feed-head">
        <h2>Activity</h2>
        <Tabs className="feed-tabs" label="Show the activity of" idBase={ids} selected={scope} onSelect={setScope} tabs={[
          {id: 'project', label: `This project${here ? ` (${here})` : ''}`},
          {id: 'all', label: `All projects${all ? ` (${all})` : ''}`},
        ]}/>
        <button type="button" className="icon" aria-label="Close activity" onClick={() => setFeedOpen(false)}>×</button>
      </header>
      {hasNews(closed) && (
        <button type="button" className="link feed-while-closed" onClick={() => open({kind: 'whileClosed'})}
          title="What Shepherd found when its engine started: agents that ended, re-attached or were recovered">
          While Shepherd was closed…
        </button>
      )}
      <div className="feed-panel" {...tabPanel(ids, scope)} tabIndex={entries.length === 0 ? 0 : undefined}>
        {entries.length === 0
          ? <p className="muted feed-empty">Nothing yet. Failures, recoveries, automatic restarts and timeouts are listed here, and kept.</p>
          : (
            <ol className="feed-list" role="feed" aria-busy="false" aria-label={scope === 'all' ? 'Activity of all projects' : 'Activity of this project'}
              onKeyDown={(e) => {
                if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return
                const items = Array.from(e.currentTarget.querySelectorAll<HTMLElement>('[role="article"]'))
                const on = (e.target as HTMLElement).closest<HTMLElement>('[role="article"]')
                if (e.key === 'Enter' && on === e.target) {
                  const f = entries[items.indexOf(on)]
                  if (f?.agentId) {
                    e.preventDefault()
                    go(f)
                  }
                  return
                }
                const i = on ? items.indexOf(on) : -1
                if (e.key === 'PageDown' || e.key === 'PageUp') {
                  e.preventDefault()
                  items[e.key === 'PageDown' ? Math.min(items.length - 1, i + 1) : Math.max(0, i - 1)]?.focus()
                  return
                }
                if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(e.key)) return
                if (on && on !== document.activeElement) on.focus() // from its button: to the entry, then on
                arrowFocus(e, items)
              }}>
              {entries.map((f, i) => {
                const fresh = !f.byUser && !f.quiet && (parseTime(f.time) ?? 0) > (before.get(f.projectId) ?? 0)
                const isEntry = f.key === entry
                return (
                  <li key={f.key} className={`lv-${f.level}${fresh ? ' fresh' : ''}`} data-feed-entry role="article"
                    aria-labelledby={`${ids}-${i}`} aria-posinset={i + 1} aria-setsize={entries.length}
                    tabIndex={isEntry ? 0 : -1} onFocus={() => setCurrent(f.key)}>
                    <span className="feed-icon" aria-hidden="true">{ICON[f.level]}</span>
                    <span className="feed-main">
                      <span className="feed-line" id={`${ids}-${i}`}>
                        {f.agentId
                          ? <button type="button" className="link feed-agent" onClick={() => go(f)} title="Show this agent"
                              tabIndex={isEntry ? 0 : -1}>{f.agentId}</button>
                          : <span className="feed-agent">project</span>}
                        <span className="feed-title">{f.title}</span>
                      </span>
                      {f.reason && <span className="feed-reason" title={f.reason}>{f.reason}</span>}
                    </span>
                    <span className="feed-when" title={f.lastTime ? `First ${exact(f.time)}\nLatest ${exact(f.lastTime)}` : exact(f.time)}>
                      {scope === 'all' && <span className="feed-project">{names.get(f.projectId) ?? f.projectId}</span>}
                      {ago(f.time)}
                    </span>
                  </li>
                )
              })}
            </ol>
          )}
      </div>
    </aside>
  )
}
