import type {Agent, Project, RunResult, Settings} from '../api'

export const NOW = Date.parse('2026-05-01T12:00:00Z')
export const at = (secondsAgo: number) => new Date(NOW - secondsAgo * 1000).toISOString()

/**
 * A patch of a fixture: what a test says of it. The nested objects it names
 * (a run's figures, a worktree, a sample) need only the fields the test is
 * about; the others are left out, as an engine that did not report them.
 */
export type Patch<T> = {
  [K in keyof T]?: NonNullable<T[K]> extends readonly unknown[] ? T[K]
    : NonNullable<T[K]> extends object ? Patch<NonNullable<T[K]>> | null : T[K]
}

/** A run's figures with only these (the others not reported). */
export const figures = (patch: Partial<RunResult> = {}): RunResult => patch as RunResult

export function agent(patch: Patch<Agent> = {}): Agent {
  return {
    id: 'build', projectId: 'p1', command: 'make', args: ['-j4'], cwd: '/src/app', profile: 'generic',
    keepAlive: false, autoStartOnRestore: false, timeoutSec: 0, graceSec: 10, status: 'not_started',
    desired: 'stopped', attached: true, createdAt: at(3600), restartCount: 0, restartFailureCount: 0,
    autoResumeCount: 0, resumeCount: 0, logPath: '/data/agent.log',
    ...(patch as Partial<Agent>),
  }
}

/** A project as the engine lists it, with these. */
export function project(patch: Patch<Project> = {}): Project {
  return {
    id: 'p1', name: 'demo', path: '/src/demo', createdAt: '', loaded: true, live: 0, queued: 0, maxRunning: 0,
    paused: false, costToday: 0, ...(patch as Partial<Project>),
  }
}

/** A project's settings as the engine answers them (its defaults), with these. */
export function settings(patch: Partial<Settings> = {}): Settings {
  return {
    watchdogIntervalSec: 2, staleCheckIntervalSec: 60, staleThresholdSec: 300, busyThresholdSec: 1800, resultGraceSec: 10,
    autoResumeLimit: 3, pausedExpiryDays: 7, safePointWaitSec: 300, maxRunning: 0, notifyNative: true, notifyCompletion: false, usageLimitWait: true,
    dailyBudgetUsd: 0, worktreeSetup: '', boxMaxProcesses: 4096, boxMemoryMiB: 0, boxShmMiB: 1024, logMaxMiB: 10, logKeep: 5,
    ...patch,
  }
}
