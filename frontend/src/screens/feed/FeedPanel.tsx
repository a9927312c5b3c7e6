import {useEffect, useMemo, useState} from 'react'
import type {Project} from '../../api'
import {BellIcon} from '../../components/Icons'
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

/** Every notification and recovery, persisted in events.jsonl: for this project or all of them. */
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
  return (
    <aside className="feed" aria-label="Activity">
      <header className="feed-head">
        <h2>Activity</h2>
        <span className="feed-tabs" role="tablist">
          <button type="button" role="tab" aria-selected={scope === 'project'} onClick={() => setScope('project')}>
            This project{here ? ` (${here})` : ''}
          </button>
          <button type="button" role="tab" aria-selected={scope === 'all'} onClick={() => setScope('all')}>
            All projects{all ? ` (${all})` : ''}
          </button>
        </span>
        <button type="button" className="icon" aria-label="Close activity" onClick={() => setFeedOpen(false)}>×</button>
      </header>
      {hasNews(closed) && (
        <button type="button" className="link feed-while-closed" onClick={() => open({kind: 'whileClosed'})}
          title="What Shepherd found when its engine started: agents that ended, re-attached or were recovered">
          While Shepherd was closed…
        </button>
      )}
      {entries.length === 0
        ? <p className="muted feed-empty">Nothing yet. Failures, recoveries, automatic restarts and timeouts are listed here, and kept.</p>
        : (
          <ol className="feed-list">
            {entries.map((f) => {
              const fresh = !f.byUser && !f.quiet && (parseTime(f.time) ?? 0) > (before.get(f.projectId) ?? 0)
              return (
                <li key={f.key} className={`lv-${f.level}${fresh ? ' fresh' : ''}`} data-feed-entry>
                  <span className="feed-icon" aria-hidden="true">{ICON[f.level]}</span>
                  <span className="feed-main">
                    <span className="feed-line">
                      {f.agentId
                        ? <button type="button" className="link feed-agent" onClick={() => go(f)} title="Show this agent">{f.agentId}</button>
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
    </aside>
  )
}
