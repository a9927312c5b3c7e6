// Server state: react-query hooks over src/api, kept fresh by pushed events
// (no polling loop).
import {useEffect} from 'react'
import {useQueries, useQuery, useQueryClient, type QueryClient} from '@tanstack/react-query'
import {toast} from 'sonner'
import {api, EVENTS, eventProblems, getEngine, onEvent, type Agent, type AgentRef, type EngineStatus, type EventName, type EventPayload, type Host, type Notification, type Project, type StatsBatch, type SyncSummary, type WhileClosed} from '../api'
import {awayText} from '../lib/hosts'
import {feedOf, type FeedEntry} from '../lib/feed'
import {countGroups} from '../lib/groups'
import {runCounts} from '../lib/runs'
import {repeats} from '../lib/whileClosed'
import {useUI} from './ui'

export const keys = {
  hosts: ['hosts'] as const,
  projects: ['projects'] as const,
  engine: ['engine'] as const,
  agents: (projectId: string) => ['agents', projectId] as const,
  events: (projectId: string, agentId: string) => ['events', projectId, agentId] as const,
  settings: (projectId: string) => ['settings', projectId] as const,
  feed: (projectId: string) => ['feed', projectId] as const,
  sandbox: ['sandbox'] as const,
  mcpConfig: ['mcpConfig'] as const,
  whileClosed: ['whileClosed'] as const,
  statsHistory: (projectId: string, agentId: string, startedAt: string) => ['statsHistory', projectId, agentId, startedAt] as const,
}

/** Events read for the feed, per project (the newest). */
export const FEED_EVENTS = 400
/** Events read for one agent's runs and events tab. */
export const AGENT_EVENTS = 500

/** What the engine found at its start, for every project (null while it loads them; then pushed as engine:while-closed). */
export function useWhileClosed() {
  return useQuery({queryKey: keys.whileClosed, queryFn: async () => (await api.projects.whileClosed()) ?? null, retry: false,
    staleTime: Infinity}) // pushed when it changes; read again with everything when the engine changes
}

/** No engine answers (the one attached to went away, or none started): the banner says so, once. */
export const engineDown = (st?: EngineStatus) => st?.state === 'lost' || st?.state === 'none'
export const useEngineDown = () => engineDown(useEngineStatus().data)

/** Which engine the window talks to (pushed as engine:status when it changes). */
export function useEngineStatus() {
  return useQuery({queryKey: keys.engine, queryFn: () => getEngine().catch((err: unknown): EngineStatus =>
    ({state: 'none', url: '', pid: 0, dataDir: '', message: String(err)}))})
}

/**
 * The window shows a project's agents: their CPU and memory are sampled
 * while it does (a lease renewed every 10 s; nobody looking, nothing is
 * sampled). Samples arrive as agent:stats.
 */
export function useWatchProject(projectId: string | null) {
  useEffect(() => {
    if (!projectId) return
    const watch = () => void api.agents.watch(projectId).catch(() => {})
    watch()
    const t = setInterval(watch, 10_000)
    return () => clearInterval(t)
  }, [projectId])
}

/** Puts a stats sample on the cached agents of its project. */
export function applyStats(qc: QueryClient, batch: StatsBatch) {
  qc.setQueryData<Agent[]>(keys.agents(batch.projectId), (old) =>
    old?.map((a) => (batch.agents[a.id] ? {...a, stats: batch.agents[a.id]} : a)))
}

/** What of the sandbox the engine's machine can enforce (asked once; fetched again with everything when the engine changes). */
export function useSandboxSupport() {
  return useQuery({queryKey: keys.sandbox, queryFn: () => api.settings.sandbox(), staleTime: Infinity, retry: false})
}

/** Shepherd's `--mcp-config` value for a Claude Code agent. */
export function useMCPConfig(enabled: boolean) {
  return useQuery({queryKey: keys.mcpConfig, queryFn: () => api.mcpConfig(), staleTime: Infinity, retry: false, enabled})
}

/** The project's cost today, as the engine sums it (the project list is read again on every pushed state). */
export function useCostToday(p: Project): number {
  return p.costToday ?? 0
}

/** The hosts and their state (pushed as host:state when it changes). */
export function useHosts() {
  return useQuery({queryKey: keys.hosts, queryFn: () => api.hosts.list(), retry: false})
}

export function useProjects() {
  return useQuery({queryKey: keys.projects, queryFn: api.projects.list})
}

export function useAgents(projectId: string | null) {
  return useQuery({
    queryKey: keys.agents(projectId ?? ''),
    queryFn: () => api.agents.list(projectId!),
    enabled: !!projectId,
  })
}

/**
 * What needs the user in each project: counted from its agents where the
 * window holds them (the same rule as the list's Needs you), else the
 * engine's count.
 */
export function useAttentionCounts(projects: readonly Project[]): Map<string, number> {
  return useQueries({
    queries: projects.map((p) => ({
      queryKey: keys.agents(p.id),
      queryFn: () => api.agents.list(p.id),
      enabled: false, // read what is cached; the shown project's list is fetched by its screen
    })),
    combine: (results) => new Map(results.map((r, i) => [projects[i].id,
      r.data ? countGroups(r.data).attention : projects[i].attention ?? 0])),
  })
}

export function useAgentEvents(projectId: string, agentId: string) {
  return useQuery({
    queryKey: keys.events(projectId, agentId),
    queryFn: () => api.agents.events(projectId, agentId, AGENT_EVENTS),
  })
}

interface ProjectFeed {
  entries: FeedEntry[]
  /** Runs started per agent, counted from the same events (the newest FEED_EVENTS of the project). */
  runs: Record<string, number>
}

async function projectFeed(projectId: string): Promise<ProjectFeed> {
  const events = await api.agents.events(projectId, '', FEED_EVENTS) ?? []
  return {entries: feedOf(events, projectId), runs: runCounts(events)}
}

/** The activity feed of these projects, one query each (newest first within each). */
export function useFeeds(projects: readonly Project[]): {projectId: string; entries: FeedEntry[]}[] {
  return useQueries({
    queries: projects.map((p) => ({queryKey: keys.feed(p.id), queryFn: () => projectFeed(p.id)})),
    combine: (results) => results.map((r, i) => ({projectId: projects[i].id, entries: r.data?.entries ?? []})),
  })
}

/** Runs started per agent of the project, from its recent events (the list's Runs column). */
export function useRunCounts(projectId: string): Record<string, number> {
  return useQuery({queryKey: keys.feed(projectId), queryFn: () => projectFeed(projectId), select: (f) => f.runs}).data ?? {}
}

/**
 * How often, at most, a burst of pushed events makes the window read a list
 * again (ms). Each read's answer crosses the bridge as one script the web
 * view parses (the feed's 400 events are some 60 KB); with 40 busy agents a
 * read per event was some 90 reads of each list a minute. Pushed records are
 * applied at once; these reads only catch what the pushes missed.
 */
export const REFRESH_MS = {agents: 2000, feed: 3000, projects: 1000} as const

/** Invalidates a project's query at most once every `ms`, however many events arrive. */
export function refresher(qc: QueryClient, key: (projectId: string) => readonly unknown[], ms = 500) {
  const pending = new Map<string, ReturnType<typeof setTimeout>>()
  return {
    touch(projectId: string) {
      if (pending.has(projectId)) return
      pending.set(projectId, setTimeout(() => {
        pending.delete(projectId)
        void qc.invalidateQueries({queryKey: key(projectId)})
      }, ms))
    },
    stop() {
      pending.forEach(clearTimeout)
      pending.clear()
    },
  }
}

export function useSettings(projectId: string | null) {
  return useQuery({
    queryKey: keys.settings(projectId ?? ''),
    queryFn: () => api.settings.get(projectId!),
    enabled: !!projectId,
  })
}

/** Puts a record pushed by the engine into the cached list of its project. */
export function upsertAgent(qc: QueryClient, rec: Agent) {
  qc.setQueryData<Agent[]>(keys.agents(rec.projectId), (old) => {
    if (!old) return old
    const i = old.findIndex((a) => a.id === rec.id)
    if (i < 0) return [...old, rec]
    const next = old.slice()
    next[i] = rec
    return next
  })
}

const OUTCOME_TEXT: Record<string, [string, string]> = {
  exited_while_closed: ['agent exited while Shepherd was closed', 'agents exited while Shepherd was closed'],
  unknown_exit: ['agent ended while Shepherd was closed (reason unknown)', 'agents ended while Shepherd was closed (reason unknown)'],
  reattached: ['re-attached', 're-attached'],
  pid_reused: ['agent lost to a reused pid', 'agents lost to reused pids'],
  other_boot: ['agent from before a reboot', 'agents from before a reboot'],
  auto_started: ['auto-started', 'auto-started'],
  corrupt: ['unreadable record moved aside', 'unreadable records moved aside'],
}

/** "2 agents exited while Shepherd was closed, 1 re-attached"; "" when nothing changed. */
export function summarize(sum: SyncSummary): string {
  const parts: string[] = []
  for (const [outcome, [one, many]] of Object.entries(OUTCOME_TEXT)) {
    const n = sum.counts?.[outcome] ?? 0
    if (n > 0) parts.push(`${n} ${n === 1 ? one : many}`)
  }
  return parts.join(', ')
}

/**
 * A notification's words for a toast: projects by their names, never their
 * ids (an older engine's message may still carry one), and the project named
 * in the title when it is not the one on screen.
 */
export function notificationWords(n: Notification, projects: readonly Project[] | undefined, shown: string | null): {title: string; message: string} {
  const name = n.projectName || projects?.find((p) => p.id === n.projectId)?.name
  const message = name && n.projectId ? n.message.split(n.projectId).join(name) : n.message
  const title = name && n.projectId && n.projectId !== shown ? `${n.title} · ${name}` : n.title
  return {title, message}
}

/** Wires the engine's pushed events to the cache and to toasts. */
export function useEngineEvents() {
  const qc = useQueryClient()
  useEffect(() => {
    const feed = refresher(qc, keys.feed, REFRESH_MS.feed)
    // Each record is put in the cache as it comes; the list is also read
    // again shortly after a burst, so the window ends right even if pushed
    // events overtook each other (wails dev's browser server sends each one
    // from a goroutine of its own) or one was lost.
    const lists = refresher(qc, keys.agents, REFRESH_MS.agents)
    // The project list (counts, cost) is one query for every project.
    const projects = refresher(qc, () => keys.projects, REFRESH_MS.projects)
    const hosts = refresher(qc, () => keys.hosts, REFRESH_MS.projects)
    // A host's notification: a toast naming the host; Show goes to that machine's agent.
    const hostNotify = (host: string, n: Notification) => {
      const {projectId, agentId} = n
      const show = projectId && agentId ? {action: {label: 'Show', onClick: () => {
        const ui = useUI.getState()
        ui.selectHost(host)
        useUI.getState().selectProject(projectId)
        useUI.getState().selectAgent(agentId)
      }}} : {}
      const opts = {description: n.message, ...show, ...(projectId && agentId ? {id: `notify-${host}-${projectId}-${agentId}`} : {})}
      const title = `${n.title} · ${host}`
      if (n.level === 'error') toast.error(title, opts)
      else if (n.level === 'warning') toast.warning(title, opts)
      else if (n.level === 'success') toast.success(title, opts)
      else toast.info(title, opts)
    }
    // What a machine's engine pushes about its agents and projects: this
    // computer's as they come, a host's inside host:event — each applied
    // only while the window shows that machine.
    const machine: Partial<{[E in EventName]: (data: EventPayload<E>) => void}> = {
      [EVENTS.agentState]: (rec: Agent) => {
        upsertAgent(qc, rec)
        lists.touch(rec.projectId)
        feed.touch(rec.projectId)
        projects.touch('')
        void qc.invalidateQueries({queryKey: keys.events(rec.projectId, rec.id)})
      },
      [EVENTS.agentRemoved]: (ref: AgentRef) => {
        qc.setQueryData<Agent[]>(keys.agents(ref.projectId), (old) => old?.filter((a) => a.id !== ref.agentId))
        feed.touch(ref.projectId)
        projects.touch('')
      },
      [EVENTS.projectSynced]: (sum: SyncSummary) => {
        void qc.invalidateQueries({queryKey: keys.agents(sum.projectId)})
        void qc.invalidateQueries({queryKey: keys.projects})
        const text = summarize(sum)
        // The first load after a start repeats the while-closed summary, which says it for every project at once.
        if (text && !repeats(qc.getQueryData<WhileClosed | null>(keys.whileClosed), sum.projectId, sum.counts)) {
          toast.info(text, {id: `synced-${sum.projectId}`})
        }
      },
      [EVENTS.projectState]: (view: Project) => {
        // The pause and queue fields at once; the counts come with the refetch.
        qc.setQueryData<Project[]>(keys.projects, (old) => old?.map((p) => {
          if (p.id !== view.id) return p
          const next = {...p, ...view} as Project
          if (!view.paused) Object.assign(next, {pausedAt: undefined, pauseNote: undefined, pauseProblem: undefined})
          return next
        }))
        feed.touch(view.id)
        projects.touch('')
      },
      [EVENTS.agentStats]: (batch: StatsBatch) => applyStats(qc, batch),
    }
    const local = useUI.getState
    const onMachine = <E extends EventName>(name: E) => onEvent(name, (data) => {
      if (local().host === null) (machine[name] as ((d: EventPayload<E>) => void) | undefined)?.(data)
    })
    const offs = [
      onMachine(EVENTS.agentState),
      onMachine(EVENTS.agentRemoved),
      onMachine(EVENTS.projectSynced),
      onMachine(EVENTS.projectState),
      onMachine(EVENTS.agentStats),
      onEvent(EVENTS.hostEvent, (ev) => {
        const name = ev.event as EventName
        if (ev.event === EVENTS.notify) {
          hostNotify(ev.host, ev.data as Notification)
          return
        }
        const handle = machine[name] as ((d: unknown) => void) | undefined
        if (!handle || local().host !== ev.host || eventProblems(name, ev.data).length > 0) return
        handle(ev.data)
      }),
      onEvent(EVENTS.hostState, (h) => {
        qc.setQueryData<Host[]>(keys.hosts, (old) => old?.map((o) => (o.name === h.name ? h : o)))
        hosts.touch('')
      }),
      onEvent(EVENTS.hostRemoved, (r) => {
        qc.setQueryData<Host[]>(keys.hosts, (old) => old?.filter((o) => o.name !== r.name))
        if (local().host === r.name) local().selectHost(null)
      }),
      onEvent(EVENTS.hostAway, (h) => {
        qc.setQueryData<Host[]>(keys.hosts, (old) => old?.map((o) => (o.name === h.name ? h : o)))
        const text = awayText(h.whileAway)
        if (text) {
          toast.info(`While ${h.name} was away`, {id: `away-${h.name}`, description: text, duration: 15_000,
            action: {label: 'Show', onClick: () => local().open({kind: 'hostAway', host: h.name})}})
        }
        // What the window holds of that machine is read again.
        if (local().host === h.name) void qc.invalidateQueries({predicate: (q) => q.queryKey[0] !== 'engine' && q.queryKey[0] !== 'hosts'})
      }),
      onEvent(EVENTS.whileClosed, (w) => qc.setQueryData(keys.whileClosed, w)),
      onEvent(EVENTS.engineStatus, (st) => {
        qc.setQueryData(keys.engine, st)
        // Another engine, or one of its own now: everything is fetched again.
        void qc.invalidateQueries({predicate: (q) => q.queryKey[0] !== 'engine'})
      }),
      onEvent(EVENTS.notify, (n) => {
        if (n.projectId) feed.touch(n.projectId)
        // An agent that waits for the user (or failed) is one click away.
        const {projectId, agentId} = n
        const show = projectId && agentId ? {action: {label: 'Show', onClick: () => {
          const ui = useUI.getState()
          if (ui.projectId !== projectId) ui.selectProject(projectId)
          ui.selectAgent(agentId)
        }}} : {}
        // One toast per agent at most: its newer news replaces the older (a
        // crash loop does not stack a toast per crash; the feed keeps them all).
        const id = projectId && agentId ? {id: `notify-${projectId}-${agentId}`} : {}
        const {title, message} = notificationWords(n, qc.getQueryData<Project[]>(keys.projects), useUI.getState().projectId)
        const opts = {description: message, ...show, ...id, ...(n.kind === 'waiting' ? {duration: 15_000} : {})}
        if (n.level === 'error') toast.error(title, opts)
        else if (n.level === 'warning') toast.warning(title, opts)
        else if (n.level === 'success') toast.success(title, opts)
        else toast.info(title, opts)
      }),
    ]
    return () => {
      offs.forEach((off) => off())
      feed.stop()
      lists.stop()
      projects.stop()
      hosts.stop()
    }
  }, [qc])
}
