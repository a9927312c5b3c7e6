// The one door from the UI to Go. Components import this module, never the
// generated wailsjs bindings, so that tests can vi.mock it. The engine is
// reached through one generic binding, App.Call(operationId, params, body),
// typed here by the engine's description (schema.gen.ts): call('startAgent',
// {project, agent}) takes and answers what the engine's Go types say. The
// window's own bindings (folder picker, preferences, its log follow)
// stay as they are.
import * as App from '../../wailsjs/go/app/App'
import * as Agents from '../../wailsjs/go/app/AgentService'
import * as Logs from '../../wailsjs/go/app/LogService'
import * as Projects from '../../wailsjs/go/app/ProjectService'
import * as SettingsSvc from '../../wailsjs/go/app/SettingsService'
import {EventsOn, WindowSetTitle} from '../../wailsjs/runtime/runtime'
import {eventSchema, problems} from './check'
import type {operations} from './schema.gen'
import type {AgentSpec, AnswerInput, EngineStatus, Prefs, Schemas, WorktreeEnd} from './types'

export * from './types'

// ------------------------------------------------------------ the client

/** The engine's operations, by id. */
export type OperationId = keyof operations

type Present<T> = [T] extends [never] ? {} : [T] extends [undefined] ? {} : NonNullable<T>
type ParamsOf<P> = Present<P extends {path: infer X} ? X : never> &
  Present<P extends {query?: infer X} ? X : never> & Present<P extends {header?: infer X} ? X : never>

/** An operation's parameters by name: path, query and header ones alike. */
export type Params<K extends OperationId> = ParamsOf<operations[K]['parameters']>

type JSONOf<C> = C extends {content: {'application/json': infer B}} ? B : never
/** An operation's JSON body (undefined: it takes none). */
export type Body<K extends OperationId> = operations[K] extends {requestBody: infer R} ? JSONOf<R>
  : operations[K] extends {requestBody?: never} ? undefined
    : operations[K] extends {requestBody?: infer R} ? JSONOf<R> | undefined : undefined

type Success<R> = R extends {200: infer S} ? S : R extends {201: infer S} ? S : R extends {202: infer S} ? S : never
type ContentOf<S> = S extends {content: {'application/json': infer T}} ? T
  : S extends {content: {'application/x-ndjson': infer T}} ? T[]
    : S extends {content: {'text/plain': infer T}} ? T : null
/** What an operation answers (an NDJSON answer as an array). */
export type Answer<K extends OperationId> = ContentOf<Success<operations[K]['responses']>>

type ParamsArg<K extends OperationId> = {} extends Params<K> ? [params?: Params<K>] : [params: Params<K>]
type CallArgs<K extends OperationId> = operations[K] extends {requestBody: object}
  ? [params: Params<K>, body: Body<K>]
  : [...ParamsArg<K>, body?: Body<K>]

/** A refused call: the engine's kind of error (ProcessNotFound, ValidationError…), its words and status. */
export class ApiError extends Error {
  constructor(readonly kind: string, message: string, readonly status?: number) {
    super(message)
    this.name = 'ApiError'
  }
}

function asApiError(err: unknown): unknown {
  const text = typeof err === 'string' ? err : err instanceof Error ? err.message : undefined
  if (text?.startsWith('{')) {
    try {
      const e = JSON.parse(text) as {error?: string; message?: string; status?: number}
      if (e.error && typeof e.message === 'string') return new ApiError(e.error, e.message, e.status)
    } catch {
      // not the engine's error: as it is
    }
  }
  return err
}

/** Calls the engine's operation id; rejects with an ApiError. */
export async function call<K extends OperationId>(id: K, ...args: CallArgs<K>): Promise<Answer<K>> {
  const [params, body] = args as [Record<string, unknown> | undefined, unknown]
  try {
    return (await App.Call(id, params ?? {}, body === undefined || body === null ? '' : JSON.stringify(body))) as Answer<K>
  } catch (err) {
    throw asApiError(err)
  }
}

const list = <T>(v: T[] | null | undefined): T[] => v ?? []

/** A spec as the engine's type says it (of its workspace the engine reads worktree and base only). */
const specBody = (s: AgentSpec) => s as Schemas['AgentSpec']

// ------------------------------------------------------- what the UI asks

export const getVersion = (): Promise<string> => App.Version()
export const getEngine = (): Promise<EngineStatus> => App.Engine()
/** Starts an engine in this window (after the one it was attached to went away). */
export const startEngine = (): Promise<EngineStatus> => App.StartEngine()

export const api = {
  hosts: {
    list: async () => list(await call('listHosts')),
    /** Connects to a host and readies its engine; an unknown key rejects with HostKeyUnknown (its fingerprint in the message) until accepted. */
    add: (name: string, url: string, acceptKey = '') => call('addHost', {}, {name, url, acceptKey}),
    remove: async (name: string) => void await call('removeHost', {host: name}),
    /** The window shows this host's engine from now on (null: this computer's). */
    use: (host: string | null) => App.UseHost(host ?? ''),
  },
  /** The `--mcp-config` value (JSON) that gives a Claude Code agent Shepherd's MCP server. */
  mcpConfig: (): Promise<string> => App.MCPConfig(),
  projects: {
    list: async () => list(await call('listProjects')),
    add: (path: string, name = '') => call('addProject', {}, {path, name}),
    pickFolder: (title = '') => Projects.PickFolder(title),
    rename: (id: string, name: string) => call('renameProject', {project: id}, {name}),
    remove: async (id: string, force: boolean) => void await call('removeProject', {project: id, force}),
    select: (id: string) => call('selectProject', {project: id}),
    /** Pauses the project (its running agents at a safe point unless now); resolves once they are paused. */
    pause: async (id: string, note = '', now = false) => list(await call('pauseProject', {project: id}, {note, now})),
    unpause: async (id: string) => void await call('unpauseProject', {project: id}),
    /** What the engine found at its start, for every project; null while it is still loading them. */
    whileClosed: () => call('getWhileClosed').catch((err: unknown) => {
      if (err instanceof ApiError && err.status === 404) return null
      throw err
    }),
  },
  /** The engine's webhook channels (URLs masked): notifications away from the desk. */
  webhooks: {
    list: async () => list(await call('listWebhooks')),
    add: (c: {name: string; url: string; format: 'json' | 'ntfy' | 'slack'}) => call('addWebhook', {}, {id: '', ...c}),
    remove: async (id: string) => void await call('removeWebhook', {id}),
    /** A test notification now; how each channel (id, or every one) went. */
    test: async (id = '') => list(await call('testWebhooks', {}, id ? {id} : {})),
  },
  /** The subscription windows of the agents' accounts, as their last runs said (the header's "5-hour: 82 %"). */
  usage: async () => list(await call('getUsage')),
  agents: {
    list: async (projectId: string) => list(await call('listAgents', {project: projectId})),
    get: (projectId: string, id: string) => call('getAgent', {project: projectId, agent: id}),
    create: (projectId: string, spec: AgentSpec) => call('createAgent', {project: projectId}, specBody(spec)),
    update: (projectId: string, spec: AgentSpec) => call('updateAgent', {project: projectId, agent: spec.id}, specBody(spec)),
    start: (projectId: string, id: string) => call('startAgent', {project: projectId, agent: id}),
    /** graceSec < 0: the agent's own grace. */
    stop: (projectId: string, id: string, graceSec = -1) =>
      call('stopAgent', {project: projectId, agent: id}, graceSec < 0 ? undefined : {graceSec}),
    resume: (projectId: string, id: string) => call('resumeAgent', {project: projectId, agent: id}),
    pause: (projectId: string, id: string, now = false, note = '') => call('pauseAgent', {project: projectId, agent: id}, {now, note}),
    unpause: (projectId: string, id: string) => call('unpauseAgent', {project: projectId, agent: id}),
    /** The user has seen what it needed of them: it leaves Needs you until it needs them again. Rejects when there is nothing to acknowledge. */
    ack: (projectId: string, id: string) => call('ackAgent', {project: projectId, agent: id}),
    /** The answer to a budget pause: raise (above what was reached), remove the limit, once, stop. */
    answerBudget: (projectId: string, id: string, action: Schemas['BudgetInput']['action'], limit = 0) =>
      call('answerBudget', {project: projectId, agent: id}, {action, limit}),
    /** The window shows this project: sample its agents' CPU and memory (a lease; call it again while shown). */
    watch: async (projectId: string) => void await call('listAgents', {project: projectId, stats: true}),
    /** The current run's recent CPU and memory samples, oldest first (about 5 minutes; empty when not running). */
    statsHistory: async (projectId: string, id: string) => list(await call('getStats', {project: projectId, agent: id})),
    remove: async (projectId: string, id: string, force: boolean, deleteLog: boolean) =>
      void await call('removeAgent', {project: projectId, agent: id, force, deleteLog}),
    stopAll: async (projectId: string) => list(await call('stopAll', {project: projectId})),
    /** Where the engine would find command, with its PATH (not the window's); rejects when it would not. */
    lookPath: async (command: string, cwd: string) => (await call('lookupCommand', {command, cwd})).path,
    events: async (projectId: string, id: string, limit = 200) =>
      call('listEvents', {project: projectId, agent: id, limit}),
    /** What the agent asks and waits for (permissions, choices), the one it waits on first. */
    questions: async (projectId: string, id: string) => list(await call('listQuestions', {project: projectId, agent: id})),
    /** Answer one of its questions: allow once, always (keeping a rule), deny (with a message), or its choices. */
    answer: (projectId: string, id: string, answer: AnswerInput) => call('answerQuestion', {project: projectId, agent: id}, answer),
    rules: (projectId: string, id: string) => call('listRules', {project: projectId, agent: id}),
    addRule: (projectId: string, id: string, rule: string, scope: 'agent' | 'project') =>
      call('addRule', {project: projectId, agent: id}, {rule, scope}),
    removeRule: (projectId: string, id: string, rule: string, scope: 'agent' | 'project') =>
      call('removeRule', {project: projectId, agent: id}, {rule, scope}),
    /** Resume a Claude Code or Codex agent's session with message as its prompt (through the queue). */
    send: (projectId: string, id: string, message: string) => call('sendMessage', {project: projectId, agent: id}, {message}),
    /** Deny a question nobody answers after that many minutes (0: wait for the answer). */
    setAnswerPolicy: (projectId: string, id: string, denyAfterMin: number) =>
      call('setAnswerPolicy', {project: projectId, agent: id}, {denyAfterMin}),
  },
  worktree: {
    /** The agent's changes against its base (files, +/−, hunks). */
    diff: (projectId: string, id: string) => call('getDiff', {project: projectId, agent: id}),
    /** Looks at the worktree again: ahead/behind, dirty, what vanished (pushes agent:worktree). */
    refresh: (projectId: string, id: string) => call('refreshWorktree', {project: projectId, agent: id}),
    /** Removes the agent: its worktree kept as a branch, merged into the base (its uncommitted work committed first, with message), or discarded. */
    remove: async (projectId: string, id: string, opts: {force: boolean; deleteLog: boolean; end: WorktreeEnd; discardChanges: boolean; message?: string}) =>
      void await call('removeAgent', {project: projectId, agent: id, force: opts.force, deleteLog: opts.deleteLog, worktree: opts.end,
        discardChanges: opts.discardChanges, message: opts.message ?? ''}),
    /** What a merge would do now: what is committed first, the default message, as whom, what stands in the way. */
    plan: (projectId: string, id: string) => call('getMergePlan', {project: projectId, agent: id}),
    /** Commits the uncommitted work (message; empty: the default one), then merges into the base; a conflict is in the result. */
    merge: (projectId: string, id: string, message: string) => call('mergeWorktree', {project: projectId, agent: id}, {message}),
    /** Asks the agent to merge its base and resolve the conflicts (it resumes with that instruction). */
    askToResolve: (projectId: string, id: string, message = '') =>
      call('askToResolve', {project: projectId, agent: id}, {message}),
    /** Whether a preset agent of this project gets a worktree unless unticked (a git project). */
    byDefault: (projectId: string) => Agents.WorktreeByDefault(projectId),
  },
  logs: {
    tail: (projectId: string, id: string, n = 2000) => Logs.Tail(projectId, id, n),
    follow: (projectId: string, id: string, offset: number) => Logs.Follow(projectId, id, offset),
    unfollow: (projectId: string, id: string) => Logs.Unfollow(projectId, id),
  },
  settings: {
    get: (projectId: string) => call('getSettings', {project: projectId}),
    put: (projectId: string, s: Schemas['Settings']) => call('putSettings', {project: projectId}, s),
    getPrefs: (): Promise<Prefs> => SettingsSvc.GetPrefs(),
    putPrefs: (p: Prefs): Promise<Prefs> => SettingsSvc.PutPrefs(p),
    /** What of the sandbox the engine's machine can enforce. */
    sandbox: async () => {
      const sb = (await call('getEngine')).sandbox
      if (!sb) throw new Error('the engine does not say what of the sandbox it enforces')
      return sb
    },
  },
  setTitle: (title: string) => {
    try {
      WindowSetTitle(title)
    } catch {
      // no window (tests, a plain browser)
    }
  },
}

// ------------------------------------------------------------ pushed events

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
  hostState: 'host:state',
  hostEvent: 'host:event',
  hostAway: 'host:away',
  hostRemoved: 'host:removed',
} as const

/** The fingerprint (SHA256:…) in a HostKeyUnknown refusal, to show and accept. */
export function fingerprintIn(message: string): string {
  return /SHA256:[A-Za-z0-9+/]+/.exec(message)?.[0] ?? ''
}

/** The engine's events' payloads, by name (the EventPayloads schema), and the window's own engine:status. */
type Payloads = Schemas['EventPayloads'] & {'engine:status': EngineStatus}
export type EventName = (typeof EVENTS)[keyof typeof EVENTS]
export type EventPayload<E extends EventName> = Payloads[E]

/** What is wrong with an event's payload against its schema (empty: nothing; the window's own events are not checked). */
export function eventProblems(name: string, data: unknown): string[] {
  const schema = eventSchema(name)
  return schema ? problems(data, schema) : []
}

/**
 * Subscribes to a pushed event; payloads that do not match the engine's
 * description of them are reported on the console and dropped. Returns the
 * unsubscribe function.
 */
export function onEvent<E extends EventName>(name: E, handler: (data: EventPayload<E>) => void): () => void {
  try {
    return EventsOn(name, (data: unknown) => {
      const wrong = eventProblems(name, data)
      if (wrong.length > 0) {
        console.warn(`dropped a malformed ${name} event`, wrong)
        return
      }
      handler(data as EventPayload<E>)
    })
  } catch {
    return () => {} // no Wails runtime (a plain browser)
  }
}

/** The message of a rejected call (an ApiError's words; Wails rejects the window's own bindings with the error's text). */
export function errorMessage(err: unknown): string {
  if (typeof err === 'string') return err
  if (err instanceof Error) return err.message
  return String(err)
}
