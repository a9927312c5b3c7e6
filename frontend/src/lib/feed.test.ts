import {beforeEach, describe, expect, it} from 'vitest'
import type {EngineEvent} from '../api'
import {describe as describeEvent, feedOf, lastSeen, markSeen, mergeFeeds, unread} from './feed'

const t = (s: number) => new Date(Date.parse('2026-05-01T12:00:00Z') + s * 1000).toISOString()

const EVENTS: EngineEvent[] = [
  {time: t(0), event: 'created', agentId: 'a', to: 'not_started'},
  {time: t(1), event: 'transition', agentId: 'a', from: 'not_started', to: 'spawning', reason: 'start'},
  {time: t(2), event: 'transition', agentId: 'a', from: 'spawning', to: 'running', reason: 'start', data: {logOffset: 0}},
  {time: t(300), event: 'recovery', agentId: 'a', data: {found: 'stale', verdict: 'unknown', action: 'resume', autoResumeCount: 0}},
  {time: t(301), event: 'transition', agentId: 'a', from: 'running', to: 'interrupted', reason: 'exit', data: {exitReason: 'stale', signal: 'SIGKILL'}},
  {time: t(302), event: 'transition', agentId: 'a', from: 'interrupted', to: 'spawning', reason: 'auto-resume'},
  {time: t(303), event: 'transition', agentId: 'a', from: 'spawning', to: 'running', reason: 'auto-resume', data: {logOffset: 120}},
  {time: t(400), event: 'transition', agentId: 'b', from: 'running', to: 'failed', reason: 'exit', data: {exitReason: 'failed', exitCode: 3}},
  {time: t(401), event: 'keep-alive:scheduled', agentId: 'b', data: {at: t(405), failures: 2}},
  {time: t(410), event: 'start:failed', agentId: 'c', reason: 'exec: "claude": executable file not found in $PATH'},
  {time: t(420), event: 'transition', agentId: 'a', from: 'stopping', to: 'stopped', reason: 'stopped_by_user', data: {exitReason: 'stopped_by_user'}},
  {time: t(421), event: 'stop-all', data: {agents: 3}},
]

describe('feed', () => {
  beforeEach(() => localStorage.clear())

  it('keeps recoveries, failures, automatic restarts and start errors, newest first, in words', () => {
    const f = feedOf(EVENTS, 'p1')
    expect(f.map((x) => [x.agentId ?? '', x.title, x.reason ?? ''])).toEqual([
      ['', 'stop all: 3 agents', ''],
      ['a', 'stopped by user', ''],
      ['c', 'could not start', 'exec: "claude": executable file not found in $PATH'],
      ['b', 'restart scheduled in 4 s', '2 failures in a row'],
      ['b', 'failed', 'exit code 3'],
      ['a', 'interrupted', 'silent too long; killed'],
      ['a', 'auto-resumed', 'silent too long · log: unknown'],
    ])
    expect(f.every((x) => x.projectId === 'p1')).toBe(true)
    expect(f.find((x) => x.title === 'failed')!.level).toBe('error')
  })

  it('names the other recovery actions', () => {
    const d = (action: string) => describeEvent({time: t(0), event: 'recovery', agentId: 'a', data: {found: 'dead', action}}, 'p', 0)!
    expect(d('resume_limit')).toMatchObject({level: 'error', title: 'auto-resume limit reached; gave up'})
    expect(d('mark_completed')).toMatchObject({level: 'success', reason: 'found dead'})
    expect(d('notify_stale_alive').title).toBe('silent; cannot be resumed, left running')
    expect(d('something_new').title).toBe('recovery: something_new')
  })

  it('counts what is new since the feed was last seen, not what the user did', () => {
    const f = feedOf(EVENTS, 'p1')
    expect(unread(f, 0)).toBe(5)
    expect(unread(f, Date.parse(t(405)))).toBe(1)
    expect(lastSeen('p1')).toBe(0)
    markSeen('p1', Date.parse(t(500)))
    expect(unread(f, lastSeen('p1'))).toBe(0)
  })

  it('merges projects newest first', () => {
    const m = mergeFeeds([feedOf(EVENTS.slice(0, 8), 'p1'), feedOf([{time: t(350), event: 'start:failed', agentId: 'z', reason: 'x'}], 'p2')])
    expect(m.map((x) => x.agentId)).toEqual(['b', 'z', 'a', 'a'])
  })
})

describe('attention in the feed', () => {
  it('re-attached, waiting (for the user or a rate limit) and acknowledged are lines of their own', () => {
    const f = (e: EngineEvent) => describeEvent(e, 'p', 0)
    expect(f({time: t(0), event: 'reattached', agentId: 'web', data: {pid: 4242}}))
      .toMatchObject({level: 'info', title: 're-attached: still running after Shepherd restarted', reason: 'pid 4242', byUser: false})
    expect(f({time: t(0), event: 'waiting', agentId: 'c', reason: 'permission for Bash', data: {hook: 'PermissionRequest', waiting: 'permission for Bash'}}))
      .toMatchObject({level: 'warning', title: 'waiting: permission for Bash'})
    expect(f({time: t(0), event: 'waiting', agentId: 'c', reason: 'rate limit until 14:05:00', data: {attempt: 2}}))
      .toMatchObject({level: 'info', title: 'waiting: rate limit until 14:05:00'})
    expect(f({time: t(0), event: 'attention:acknowledged', agentId: 'c', reason: 'failed'}))
      .toMatchObject({level: 'info', title: 'acknowledged', reason: 'failed', byUser: true})
  })
})
