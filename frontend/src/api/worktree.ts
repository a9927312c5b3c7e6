// An agent's own git worktree: what its record says, its status, its diff.
import {z} from 'zod'

/** The record's worktree: asked for (worktree, base) and made (the rest). */
export const workspaceSchema = z.object({
  worktree: z.boolean(),
  base: z.string().nullish(),
  repo: z.string().nullish(),
  path: z.string().nullish(),
  branch: z.string().nullish(),
  baseCommit: z.string().nullish(),
  /** What vanished (the folder, its branch): found at load, never made again. */
  problem: z.string().nullish(),
  /** Worth knowing: the base moved, the setup command failed. */
  warning: z.string().nullish(),
  ahead: z.number().nullish(),
  behind: z.number().nullish(),
  dirty: z.boolean().nullish(),
  /** The base is being merged into the branch in the worktree (the agent was asked to resolve). */
  merging: z.boolean().nullish(),
  /** The files that still hold conflict markers. */
  conflicts: z.array(z.string()).nullish(),
  checkedAt: z.string().nullish(),
}).loose()
export type Workspace = z.infer<typeof workspaceSchema>

export const worktreeStatusSchema = z.object({
  branch: z.string(),
  base: z.string(),
  ahead: z.number(),
  behind: z.number(),
  dirty: z.boolean(),
  merging: z.boolean().nullish(),
  conflicts: z.array(z.string()).nullish(),
  problem: z.string().nullish(),
}).loose()
export type WorktreeStatus = z.infer<typeof worktreeStatusSchema>

/** agent:worktree: the worktree was looked at again (its run ended, a refresh). */
export const worktreeViewSchema = z.object({
  projectId: z.string(),
  agentId: z.string(),
  status: worktreeStatusSchema,
}).loose()
export type WorktreeView = z.infer<typeof worktreeViewSchema>

export interface DiffLine {
  /** '+', '-', ' ' (context) or '\\' (no newline at end of file). */
  op: string
  text: string
}

export interface Hunk {
  header: string
  oldStart: number
  oldLines: number
  newStart: number
  newLines: number
  lines: DiffLine[] | null
}

export interface FileDiff {
  path: string
  oldPath?: string
  /** added, deleted, modified, renamed, copied, untracked */
  status: string
  added: number
  deleted: number
  binary?: boolean
  /** Git's mode when it says one: "120000" for a symlink (its content is the link's text). */
  mode?: string
  /** Why its lines are not shown: a named pipe, socket or device (never opened), too large. */
  note?: string
  hunks: Hunk[] | null
}

/** A worktree's changes against where its branch and its base meet: commits and what is not committed. */
export interface Diff {
  base: string
  from: string
  files: FileDiff[] | null
  added: number
  deleted: number
  truncated: boolean
}

/** What becomes of a worktree when its agent is removed. */
export type WorktreeEnd = 'keep' | 'merge' | 'discard'

/** One uncommitted change a merge commits first. */
export interface Change {
  path: string
  /** added, modified, deleted, typechange, untracked, conflicted */
  status: string
}

/** What merging a worktree would do now: what is committed first, with which message, as whom, and what stands in the way. */
export interface MergePlan {
  branch: string
  base: string
  repo: string
  ahead: number
  behind: number
  uncommitted: Change[] | null
  message: string
  identity?: string
  /** The base is being merged into the branch in the worktree (the agent was asked). */
  merging: boolean
  /** Files that still hold conflict markers. */
  conflicts?: string[] | null
  upToDate: boolean
  /** Why it cannot merge now. */
  blocked?: string
  /** The agent runs now: it merges once its run has ended (a remove stops it first). */
  running?: string
}

/** A merge into the base that conflicted: aborted, nothing lost. */
export interface MergeConflict {
  branch: string
  base: string
  files: string[] | null
  /** The commit of the uncommitted work, made first (kept on the branch). */
  committed?: string
}

export interface MergeResult {
  committed?: string
  merged: boolean
  upToDate?: boolean
  fastForward?: boolean
  head?: string
  conflict?: MergeConflict | null
}

/** What asking the agent to resolve did. */
export interface ResolveResult {
  committed?: string
  conflicts: string[] | null
  /** The base merged without a conflict: nothing to ask. */
  clean?: boolean
  head?: string
  resumed?: boolean
  instruction?: string
  /** The agent's status after: resumed, or queued at queuePosition. */
  status?: string
  queuePosition?: number
}
