// The one door from the UI to Go. Components import this module, never the
// generated wailsjs bindings, so that tests can vi.mock it and the bindings'
// untyped corners (times as `any`) stay in one place.
import * as App from '../../wailsjs/go/app/App'
import * as Agents from '../../wailsjs/go/app/AgentService'
import * as Logs from '../../wailsjs/go/app/LogService'
import * as Projects from '../../wailsjs/go/app/ProjectService'
import * as SettingsSvc from '../../wailsjs/go/app/SettingsService'
import {EventsOn, WindowSetTitle} from '../../wailsjs/runtime/runtime'
import type {z} from 'zod'
import {
  agentRefSchema, agentSchema, engineAlertsSchema, engineStatusSchema, logBatchSchema, notificationSchema, projectStateSchema, statsBatchSchema, syncSummarySchema, whileClosedSchema,
  type Agent, type AgentSpec, type EngineEvent, type EngineStatus, type LogChunk, type Project,
  type Prefs, type SandboxSupport, type Settings, type Stats, type SyncSummary, type WhileClosed,
} from './types'
import {worktreeViewSchema, type Diff, type MergePlan, type MergeResult, type ResolveResult, type WorktreeEnd, type WorktreeView} from './worktree'

export * from './types'
export * from './worktree'

export const getVersion = (): Promise<string> => App.Version()
export const getEngine = (): Promise<EngineStatus> => App.Engine() as Promise<EngineStatus>
/** Starts an engine in this window (after the one it was attached to went away). */
export const startEngine = (): Promise<EngineStatus> => App.StartEngine() as Promise<EngineStatus>

export const api = {
  /** The `--mcp-config` value (JSON) that gives a Claude Code agent Shepherd's MCP server. */
  mcpConfig: (): Promise<string> => App.MCPConfig(),
  projects: {
    list: () => Projects.List() as Promise<Project[]>,
    add: (path: string, name = '') => Projects.Add(path, name) as Promise<Project>,
    pickFolder: (title = '') => Projects.PickFolder(title),
    rename: (id: string, name: string) => Projects.Rename(id, name) as Promise<Project>,
    remove: (id: string, force: boolean) => Projects.Remove(id, force),
    select: (id: string) => Projects.Select(id) as Promise<SyncSummary>,
    /** Pauses the project (its running agents at a safe point unless now); resolves once they are paused. */
    pause: (id: string, note = '', now = false) =>
      Projects.Pause(id, note, now) as Promise<{agentId: string; record?: Agent; error?: string}[]>,
    unpause: (id: string) => Projects.Unpause(id),
    /** What the engine found at its start, for every project; null while it is still loading them. */
    whileClosed: () => Projects.WhileClosed() as Promise<WhileClosed | null>,
  },
  agents: {
    list: (projectId: string) => Agents.List(projectId) as Promise<Agent[]>,
    get: (projectId: string, id: string) => Agents.Get(projectId, id) as Promise<Agent>,
    create: (projectId: string, spec: AgentSpec) =>
      Agents.Create(projectId, spec as Parameters<typeof Agents.Create>[1]) as Promise<Agent>,
    update: (projectId: string, spec: AgentSpec) =>
      Agents.Update(projectId, spec as Parameters<typeof Agents.Update>[1]) as Promise<Agent>,
    start: (projectId: string, id: string) => Agents.Start(projectId, id) as Promise<Agent>,
    /** graceSec < 0: the agent's own grace. */
    stop: (projectId: string, id: string, graceSec = -1) => Agents.Stop(projectId, id, graceSec) as Promise<Agent>,
    resume: (projectId: string, id: string) => Agents.Resume(projectId, id) as Promise<Agent>,
    pause: (projectId: string, id: string, now = false, note = '') => Agents.Pause(projectId, id, now, note) as Promise<Agent>,
    unpause: (projectId: string, id: string) => Agents.Unpause(projectId, id) as Promise<Agent>,
    /** The user has seen what it needed of them: it leaves Needs you until it needs them again. Rejects when there is nothing to acknowledge. */
    ack: (projectId: string, id: string) => Agents.Ack(projectId, id) as Promise<Agent>,
    /** The answer to a budget pause: raise (above what was reached), remove the limit, once, stop. */
    answerBudget: (projectId: string, id: string, action: 'raise' | 'remove' | 'once' | 'stop', limit = 0) =>
      Agents.AnswerBudget(projectId, id, action, limit) as Promise<Agent>,
    /** The window shows this project: sample its agents' CPU and memory (a 15 s lease; call it again while shown). */
    watch: (projectId: string) => Agents.Watch(projectId),
    /** The current run's recent CPU and memory samples, oldest first (about 5 minutes; empty when not running). */
    statsHistory: (projectId: string, id: string) => Agents.StatsHistory(projectId, id) as Promise<Stats[]>,
    remove: (projectId: string, id: string, force: boolean, deleteLog: boolean) =>
      Agents.Remove(projectId, id, force, deleteLog),
    stopAll: (projectId: string) =>
      Agents.StopAll(projectId) as Promise<{agentId: string; record?: Agent; error?: string}[]>,
    /** Where the engine would find command (exec.LookPath); rejects when it would not. */
    lookPath: (command: string, cwd: string) => Agents.LookPath(command, cwd),
    events: (projectId: string, id: string, limit = 200) =>
      Agents.Events(projectId, id, limit) as Promise<EngineEvent[]>,
  },
  worktree: {
    /** The agent's changes against its base (files, +/−, hunks). */
    diff: (projectId: string, id: string) => Agents.Diff(projectId, id) as Promise<Diff>,
    /** Looks at the worktree again: ahead/behind, dirty, what vanished (pushes agent:worktree). */
    refresh: (projectId: string, id: string) => Agents.RefreshWorktree(projectId, id) as Promise<WorktreeView>,
    /** Removes the agent: its worktree kept as a branch, merged into the base (its uncommitted work committed first, with message), or discarded. */
    remove: (projectId: string, id: string, opts: {force: boolean; deleteLog: boolean; end: WorktreeEnd; discardChanges: boolean; message?: string}) =>
      Agents.RemoveWorktree(projectId, id, opts.force, opts.deleteLog, opts.end, opts.discardChanges, opts.message ?? ''),
    /** What a merge would do now: what is committed first, the default message, as whom, what stands in the way. */
    plan: (projectId: string, id: string) => Agents.MergePlan(projectId, id) as Promise<MergePlan>,
    /** Commits the uncommitted work (message; empty: the default one), then merges into the base; a conflict is in the result. */
    merge: (projectId: string, id: string, message: string) => Agents.Merge(projectId, id, message) as Promise<MergeResult>,
    /** Asks the agent to merge its base and resolve the conflicts (it resumes with that instruction). */
    askToResolve: (projectId: string, id: string, message = '') =>
      Agents.AskToResolve(projectId, id, message) as Promise<ResolveResult>,
    /** Whether a preset agent of this project gets a worktree unless unticked (a git project). */
    byDefault: (projectId: string) => Agents.WorktreeByDefault(projectId),
  },
  logs: {
    tail: (projectId: string, id: string, n = 2000) => Logs.Tail(projectId, id, n) as Promise<LogChunk>,
    follow: (projectId: string, id: string, offset: number) => Logs.Follow(projectId, id, offset),
    unfollow: (projectId: string, id: string) => Logs.Unfollow(projectId, id),
  },
  settings: {
    get: (projectId: string) => SettingsSvc.Get(projectId) as Promise<Settings>,
    // The generated type follows the Go struct, which grows; the engine checks what it gets.
    put: (projectId: string, s: Settings) =>
      SettingsSvc.Put(projectId, s as Parameters<typeof SettingsSvc.Put>[1]) as Promise<Settings>,
    getPrefs: () => SettingsSvc.GetPrefs() as Promise<Prefs>,
    putPrefs: (p: Prefs) => SettingsSvc.PutPrefs(p as Parameters<typeof SettingsSvc.PutPrefs>[0]) as Promise<Prefs>,
    /** What of the sandbox the engine's machine can enforce. */
    sandbox: () => SettingsSvc.Sandbox() as Promise<SandboxSupport>,
  },
  setTitle: (title: string) => {
    try {
      WindowSetTitle(title)
    } catch {
      // no window (tests, a plain browser)
    }
  },
}

/** Pushed event names, the same constants as in Go. */
export const EVENTS = {
  agentState: 'agent:state',
  agentRemoved: 'agent:removed',
  agentLog: 'agent:log',
  projectSynced: 'project:synced',
  projectState: 'project:state',
  engineStatus: 'engine:status',
  agentStats: 'agent:stats',
  notify: 'notify',
  whileClosed: 'engine:while-closed',
  agentWorktree: 'agent:worktree',
  engineAlerts: 'engine:alerts',
} as const

const schemas = {
  [EVENTS.agentState]: agentSchema,
  [EVENTS.agentRemoved]: agentRefSchema,
  [EVENTS.agentLog]: logBatchSchema,
  [EVENTS.projectSynced]: syncSummarySchema,
  [EVENTS.projectState]: projectStateSchema,
  [EVENTS.engineStatus]: engineStatusSchema,
  [EVENTS.agentStats]: statsBatchSchema,
  [EVENTS.notify]: notificationSchema,
  [EVENTS.whileClosed]: whileClosedSchema,
  [EVENTS.agentWorktree]: worktreeViewSchema,
  [EVENTS.engineAlerts]: engineAlertsSchema,
}
type Schemas = typeof schemas
export type EventName = keyof Schemas
export type EventPayload<E extends EventName> = z.infer<Schemas[E]>

/**
 * Subscribes to a pushed event; payloads that do not match their schema are
 * reported on the console and dropped. Returns the unsubscribe function.
 */
export function onEvent<E extends EventName>(name: E, handler: (data: EventPayload<E>) => void): () => void {
  try {
    return EventsOn(name, (data: unknown) => {
      const parsed = schemas[name].safeParse(data)
      if (!parsed.success) {
        console.warn(`dropped a malformed ${name} event`, parsed.error.issues)
        return
      }
      handler(parsed.data as EventPayload<E>)
    })
  } catch {
    return () => {} // no Wails runtime (a plain browser)
  }
}

/** The message of a rejected Go call (Wails rejects with the error's text). */
export function errorMessage(err: unknown): string {
  if (typeof err === 'string') return err
  if (err instanceof Error) return err.message
  return String(err)
}
