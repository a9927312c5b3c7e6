import type {Agent} from '../api'

export const NOW = Date.parse('2026-05-01T12:00:00Z')
export const at = (secondsAgo: number) => new Date(NOW - secondsAgo * 1000).toISOString()

export function agent(patch: Partial<Agent> = {}): Agent {
  return {
    id: 'build', projectId: 'p1', command: 'make', args: ['-j4'], cwd: '/src/app', profile: 'generic',
    keepAlive: false, autoStartOnRestore: false, timeoutSec: 0, graceSec: 10, status: 'not_started',
    desired: 'stopped', attached: true, createdAt: at(3600), restartCount: 0, restartFailureCount: 0,
    autoResumeCount: 0, resumeCount: 0, logPath: '/data/agent.log',
    ...patch,
  }
}
