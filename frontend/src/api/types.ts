// The shapes the engine sends and takes, as the UI names them: every one
// from the engine's description (schema.gen.ts, generated from
// backend/api/openapi.json), the window's own from its Wails bindings.
import type {components, operations} from './schema.gen'
import type {app, logfollow, prefs} from '../../wailsjs/go/models'

export type Schemas = components['schemas']

export const STATUSES = [
  'not_started', 'queued', 'spawning', 'running', 'timed_out', 'stopping', 'killing',
  'completed', 'failed', 'stopped', 'interrupted', 'paused',
] as const
export type Status = (typeof STATUSES)[number]

export const LIVE: ReadonlySet<string> = new Set(['spawning', 'running', 'timed_out', 'stopping', 'killing'])

/** An agent's record (the engine's store.Record). */
export type Agent = Schemas['Record']
/**
 * An agent's spec as the window sends it: the engine's AgentSpec, whose
 * workspace is read for worktree and base only (its Go type is the whole
 * record of the worktree the engine makes), and whose permissions may be
 * null (not sandboxed, as when left out: a Go pointer).
 */
export type AgentSpec = Omit<Schemas['AgentSpec'], 'workspace' | 'permissions'> & {
  workspace?: Pick<Schemas['Workspace'], 'worktree' | 'base'>
  permissions?: string[] | null
}
export type AgentRef = Schemas['AgentRef']
export type Activity = Schemas['Activity']
export type RunResult = Schemas['RunFigures']
export type Totals = Schemas['RunFigures']
export type Grants = Schemas['Grants']
export type Stats = Schemas['Stats']
export type StatsBatch = Schemas['StatsBatch']
export type LogBatch = Schemas['LogBatch']
/** A project with its state: pause, queue, counts, cost. */
export type Project = Schemas['ProjectView']
export type SyncSummary = Schemas['SyncSummary']
/** Another machine's engine, reached over SSH, with its state. */
export type Host = Schemas['HostView']
export type HostAway = Schemas['HostAway']
export type HostEvent = Schemas['HostEvent']
export type WhileClosed = Schemas['WhileClosed']
export type Notification = Schemas['Notification']
export type Settings = Schemas['Settings']
export type SandboxSupport = Schemas['SandboxSupport']
export type EngineAlert = Schemas['Alert']
/** One entry of a project's events.jsonl. */
export type EngineEvent = Schemas['Event']
export type Workspace = Schemas['Workspace']
export type WorktreeStatus = Schemas['WorktreeStatus']
export type WorktreeView = Schemas['WorktreeView']
export type Diff = Schemas['Diff']
export type FileDiff = Schemas['FileDiff']
export type Hunk = Schemas['Hunk']
export type DiffLine = Schemas['DiffLine']
export type Change = Schemas['WorktreeChange']
export type MergePlan = Schemas['MergePlan']
export type MergeConflict = Schemas['MergeConflict']
export type MergeResult = Schemas['MergeResult']
export type ResolveResult = Schemas['ResolveResult']
/** A question an agent's permission tool asks: a permission for a tool call, or choices (AskUserQuestion). */
export type Asked = Schemas['Asked']
export type AnswerInput = Schemas['Answer']
export type Answered = Schemas['Answered']
/** The always-allow rules that answer for an agent, and its policy for questions nobody answers. */
export type AgentRules = Schemas['Rules']
export type KeptRule = Schemas['Rule']
/** What becomes of a worktree when its agent is removed. */
export type WorktreeEnd = NonNullable<NonNullable<operations['removeAgent']['parameters']['query']>['worktree']>

/** Which engine the window talks to: the one it runs, or another it is attached to (the window's own binding). */
export type EngineStatus = app.EngineStatus
/** The app's own preferences (the window's own binding). */
export type Prefs = prefs.Prefs
export type LogChunk = logfollow.Chunk
