// The shapes Go sends, as the UI uses them (times are RFC 3339 strings), and
// zod schemas that check pushed event payloads before they reach the cache.
import {z} from 'zod'
import {workspaceSchema} from './worktree'

export const STATUSES = [
  'not_started', 'queued', 'spawning', 'running', 'timed_out', 'stopping', 'killing',
  'completed', 'failed', 'stopped', 'interrupted', 'paused',
] as const
export type Status = (typeof STATUSES)[number]

export const LIVE: ReadonlySet<string> = new Set(['spawning', 'running', 'timed_out', 'stopping', 'killing'])

// Fields the engine is growing (activity, queue, pause, results, stats,
// permissions): optional, shown when present.
export const activitySchema = z.object({
  state: z.string(), // working | busy | silent | stale | waiting
  since: z.string().nullish(),
  tool: z.string().nullish(),
  toolSince: z.string().nullish(),
  /** What a waiting agent waits for: "permission for Bash", "input", "rate limit until 14:05:00", "API overloaded". */
  waiting: z.string().nullish(),
  /** The wait is for the user (a permission, input); a rate limit is not. */
  needsYou: z.boolean().nullish(),
  /** When a rate-limited agent expects to go on. */
  until: z.string().nullish(),
}).loose()
export type Activity = z.infer<typeof activitySchema>

export const resultSchema = z.object({
  turns: z.number().nullish(),
  durationMs: z.number().nullish(),
  /** Claude Code reports what a run cost; Codex does not. */
  costUsd: z.number().nullish(),
  inputTokens: z.number().nullish(),
  cachedInputTokens: z.number().nullish(),
  outputTokens: z.number().nullish(),
  reasoningOutputTokens: z.number().nullish(),
  /** When the run's end was counted. */
  at: z.string().nullish(),
}).loose()
export type RunResult = z.infer<typeof resultSchema>

export const totalsSchema = resultSchema.extend({runs: z.number().nullish()})
export type Totals = z.infer<typeof totalsSchema>

/** A sandboxed agent's grants beyond the baseline (reads everywhere, writes only to its log, no network). */
export const grantsSchema = z.object({
  network: z.boolean(),
  writeDirs: z.array(z.string()).nullish(),
  /** The tags as stored: `@network`, `@write:<folder>`, `@read:…`. */
  permissions: z.array(z.string()).nullish(),
}).loose()
export type Grants = z.infer<typeof grantsSchema>

export const agentSchema = z.object({
  id: z.string(),
  projectId: z.string(),
  name: z.string().optional(),
  command: z.string(),
  args: z.array(z.string()).nullish(),
  env: z.record(z.string(), z.string()).nullish(),
  cwd: z.string(),
  profile: z.string(),
  resumeArgs: z.array(z.string()).nullish(),
  sessionId: z.string().optional(),
  keepAlive: z.boolean(),
  autoStartOnRestore: z.boolean(),
  timeoutSec: z.number(),
  graceSec: z.number(),
  status: z.string(),
  exitReason: z.string().optional(),
  exitCode: z.number().nullish(),
  signal: z.string().optional(),
  error: z.string().optional(),
  pid: z.number().optional(),
  desired: z.string(),
  attached: z.boolean(),
  createdAt: z.string(),
  startedAt: z.string().nullish(),
  stoppedAt: z.string().nullish(),
  lastActivityAt: z.string().nullish(),
  restartCount: z.number(),
  restartFailureCount: z.number(),
  nextRestartAt: z.string().nullish(),
  autoResumeCount: z.number(),
  resumeCount: z.number(),
  /** Runs the engine started (newer engines); absent: count from the record and the events. */
  runCount: z.number().nullish(),
  pausedAt: z.string().nullish(),
  pauseNote: z.string().nullish(),
  pausedWithProject: z.boolean().nullish(),
  queuePosition: z.number().nullish(),
  queuedAction: z.string().nullish(),
  activity: activitySchema.nullish(),
  lastResult: resultSchema.nullish(),
  totals: totalsSchema.nullish(),
  stats: z.object({
    cpuPercent: z.number().nullish(), rssBytes: z.number().nullish(), processes: z.number().nullish(), sampledAt: z.string().nullish(),
  }).loose().nullish(),
  /** Present: the agent runs sandboxed with these grants; absent: unsandboxed. */
  sandbox: grantsSchema.nullish(),
  /** Present with worktree: the agent runs in a git worktree of its own. */
  workspace: workspaceSchema.nullish(),
  /** The agent that created this one (through Shepherd's tools); absent: the user did. */
  parent: z.string().nullish(),
  staleCheck: z.boolean().nullish(),
  stale: z.boolean().nullish(),
  /** What a stale agent gets: flag, restart or resume; empty: resume for Claude and Codex profiles, flag for the others. */
  onStale: z.string().nullish(),
  /** When the user acknowledged what it needed of them (until it needs them again). */
  acknowledgedAt: z.string().nullish(),
  /** The engine's reason the agent needs the user ("failed", "waiting: input", "crash loop: …"); absent: nothing. */
  attention: z.string().nullish(),
  logPath: z.string(),
  /** Budgets per run (0 or absent: none); budgetPause: which one paused it ("run", "turns", "daily"). */
  maxBudgetUsd: z.number().nullish(),
  maxTurns: z.number().nullish(),
  budgetPause: z.string().nullish(),
  budgetOnce: z.boolean().nullish(),
}).loose()
export type Agent = z.infer<typeof agentSchema>

export const agentRefSchema = z.object({projectId: z.string(), agentId: z.string()})
export type AgentRef = z.infer<typeof agentRefSchema>

export const syncSummarySchema = z.object({
  projectId: z.string(),
  total: z.number(),
  counts: z.record(z.string(), z.number()).nullish(),
  agents: z.array(z.object({
    agentId: z.string(),
    outcome: z.string(),
    status: z.string(),
    exitCode: z.number().nullish(),
    detail: z.string().optional(),
  })).nullish(),
  corrupt: z.array(z.object({agentId: z.string(), movedTo: z.string(), problem: z.string()})).nullish(),
})
export type SyncSummary = z.infer<typeof syncSummarySchema>

/** What the engine found at its start, for every project: agents that ended with no engine watching, re-attached, recovered. */
export const whileClosedSchema = z.object({
  at: z.string(),
  projects: z.array(syncSummarySchema.extend({
    agents: z.array(z.object({
      agentId: z.string(),
      outcome: z.string(),
      status: z.string(),
      exitCode: z.number().nullish(),
      detail: z.string().optional(),
      recovery: z.string().optional(),
    })).nullish(),
  })).nullish(),
})
export type WhileClosed = z.infer<typeof whileClosedSchema>

export const notificationSchema = z.object({
  level: z.string(),
  kind: z.string().optional(),
  title: z.string(),
  projectId: z.string().optional(),
  /** The project's name, which the words use (never its id). */
  projectName: z.string().optional(),
  agentId: z.string().optional(),
  message: z.string(),
  messageJa: z.string().optional(),
})
export type Notification = z.infer<typeof notificationSchema>

export const logBatchSchema = z.object({
  projectId: z.string(),
  agentId: z.string(),
  lines: z.array(z.string()).nullish(),
  offset: z.number(),
  reset: z.boolean().optional(),
})
export type LogBatch = z.infer<typeof logBatchSchema>

export interface Project {
  id: string
  name: string
  path: string
  createdAt: string
  loaded: boolean
  agents: number
  running: number
  attention: number
  /** The pause (seed 002) and the run queue. */
  paused?: boolean
  pausedAt?: string | null
  pauseNote?: string
  pauseProblem?: string
  live?: number
  queued?: number
  maxRunning?: number
  /** Why the project's folder cannot be used (moved, deleted); its agents are still supervised. */
  folderMissing?: string
  /** What its agents' runs cost today (local day) and in all; sent by engines that count it. */
  costToday?: number
  totals?: Totals | null
  /** The daily budget (absent: none), and whether today's cost reached it (its agents paused, starts held). */
  dailyBudgetUsd?: number
  budgetHeld?: boolean
}

export const projectStateSchema = z.object({projectId: z.string().optional(), id: z.string()}).loose()

/** Something about the engine itself that needs the user: its data folder's disk nearly full ("low-space"). */
export const engineAlertSchema = z.object({
  kind: z.string(),
  message: z.string(),
  path: z.string().optional(),
  freeBytes: z.number(),
  totalBytes: z.number(),
  since: z.string(),
}).loose()
export type EngineAlert = z.infer<typeof engineAlertSchema>
export const engineAlertsSchema = z.array(engineAlertSchema)

export const engineStatusSchema = z.object({
  state: z.string(),
  url: z.string().optional(),
  pid: z.number().optional(),
  dataDir: z.string().optional(),
  message: z.string().optional(),
}).loose()

export const statsSchema = z.object({
  cpuPercent: z.number().nullish(),
  rssBytes: z.number(),
  processes: z.number(),
  sampledAt: z.string(),
})
export type Stats = z.infer<typeof statsSchema>

export const statsBatchSchema = z.object({
  projectId: z.string(),
  at: z.string(),
  agents: z.record(z.string(), statsSchema),
})
export type StatsBatch = z.infer<typeof statsBatchSchema>

export interface AgentSpec {
  id: string
  name?: string
  command: string
  args?: string[]
  env?: Record<string, string>
  cwd?: string
  profile?: string
  resumeArgs?: string[]
  keepAlive?: boolean
  autoStartOnRestore?: boolean
  timeoutSec?: number
  graceSec?: number
  /** Omitted or null: not sandboxed. An array, even empty: sandboxed with these tags. */
  permissions?: string[] | null
  /** The silence check (default on). */
  staleCheck?: boolean
  /** What a stale agent gets: flag, restart, resume; empty: the profile's default. */
  onStale?: string
  /** Per run; 0: none. */
  maxBudgetUsd?: number
  maxTurns?: number
  /** Made at create: a git worktree on branch shepherd/<id> from base (default: the project's branch). */
  workspace?: {worktree: boolean; base?: string}
}

/** What of the sandbox this machine can enforce (Landlock and network namespaces on Linux, Seatbelt on macOS). */
export interface SandboxSupport {
  os: string
  landlock: boolean
  landlockAbi?: number
  landlockError?: string
  netns: boolean
  netnsError?: string
  seatbelt: boolean
  seatbeltError?: string
}

export interface Settings {
  watchdogIntervalSec: number
  staleCheckIntervalSec: number
  staleThresholdSec: number
  /** Newer engines: a busy agent (a tool call in flight) counts as hung only after this long; 0: never. */
  busyThresholdSec?: number
  resultGraceSec: number
  autoResumeLimit: number
  pausedExpiryDays: number
  /** Newer engines: how long a pause lets a tool call in flight finish. */
  safePointWaitSec?: number
  maxRunning: number
  notifyNative: boolean
  notifyCompletion: boolean
  /** Newer engines: what the project's runs may cost a day; 0: no limit. */
  dailyBudgetUsd?: number
  /** Newer engines: a command line run in each new worktree (its output in the agent's log). */
  worktreeSetup?: string
}

/** The app's own preferences. */
export interface Prefs {
  stopAgentsOnQuit: boolean
  /** Newer engines: start Shepherd hidden at login. */
  startAtLogin?: boolean
}

export interface LogChunk {
  lines: string[]
  offset: number
}

export interface EngineEvent {
  time: string
  event: string
  agentId?: string
  from?: string
  to?: string
  reason?: string
  data?: Record<string, unknown>
}

/** Which engine the window talks to: the one it runs, or another it is attached to. */
export interface EngineStatus {
  state: 'embedded' | 'attached' | 'lost' | 'none' | string
  url: string
  pid: number
  dataDir: string
  message?: string
  /** Newer engines: what about the engine itself needs the user (pushed again as engine:alerts). */
  alerts?: EngineAlert[] | null
}
