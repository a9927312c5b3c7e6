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
  checkedAt: z.string().nullish(),
}).loose()
export type Workspace = z.infer<typeof workspaceSchema>

export const worktreeStatusSchema = z.object({
  branch: z.string(),
  base: z.string(),
  ahead: z.number(),
  behind: z.number(),
  dirty: z.boolean(),
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
