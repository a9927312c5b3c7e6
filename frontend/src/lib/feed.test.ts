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
      ['b', 'failed', 'exit code 3 · restart scheduled in 4 s, 2 failures in a row'],
      ['a', 'interrupted', 'silent too long; killed'],
      ['a', 'auto-resumed', 'silent too long · log: unknown'],
    ])
    expect(f.every((x) => x.projectId === 'p1')).toBe(true)
    expect(f.find((x) => x.title === 'failed')!.level).toBe('error')
  })

  it('names the other recovery actions', () => {
    const d = (action: string) => describeEvent({time: t(0), event: 'recovery', agentId: 'a', data: {found: 'dead', action}}, 'p', 0)!
    expect(d('resume_limit')).toMatchObject({level: 'error', title: 'auto-resume limit reached; gave up'})
    expect(d('completed')).toMatchObject({level: 'success', title: 'marked completed from its log', reason: 'found dead'})
    expect(d('failed')).toMatchObject({level: 'error', title: 'marked failed from its log'})
    expect(d('notify_stale').title).toBe('silent; left running')
    expect(d('restart').title).toBe('silent; restarted')
    expect(d('something_new').title).toBe('recovery: something_new')
  })

  it('counts what is new since the feed was last seen, not what the user did', () => {
    const f = feedOf(EVENTS, 'p1')
    expect(unread(f, 0)).toBe(4)
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

// The engine's stale check as a user met it: one line per check.
const stale = (s: number, data: Record<string, unknown> = {}): EngineEvent =>
  ({time: t(s), event: 'recovery', agentId: 'quiet', data: {found: 'stale', verdict: 'interrupted', action: 'notify_stale', autoResumeCount: 0, ...data}})

describe('the feed records changes, not repeats', () => {
  it('folds a stale agent checked every 10 s for a minute into one entry, and says what is known of a live process', () => {
    const events = [0, 10, 20, 30, 40, 50, 60].map((s) => stale(s))
    const f = feedOf(events, 'p')
    expect(f).toHaveLength(1)
    expect(f[0]).toMatchObject({title: 'silent; left running', reason: 'silent too long · still running; its log shows no end'})
    expect(f[0].reason).not.toContain('interrupted')
    expect(unread(f, 0)).toBe(1)
  })

  it('says the silence in its unit, and keeps a new silence (after the agent wrote again) as a new entry', () => {
    const f = feedOf([stale(30, {silentSec: 30}), stale(200, {silentSec: 40})], 'p')
    expect(f.map((x) => x.reason)).toEqual([
      'silent for 40 s · still running; its log shows no end',
      'silent for 30 s · still running; its log shows no end',
    ])
    // The same silence told twice is one finding.
    expect(feedOf([stale(30, {silentSec: 30}), stale(40, {silentSec: 40})], 'p')).toHaveLength(1)
  })

  it('ends a finding with a change: the agent stopped and started again is found anew', () => {
    const f = feedOf([
      stale(0),
      {time: t(5), event: 'transition', agentId: 'quiet', from: 'running', to: 'stopping', reason: 'stop'},
      {time: t(6), event: 'transition', agentId: 'quiet', from: 'stopping', to: 'stopped', reason: 'stopped_by_user', data: {exitReason: 'stopped_by_user'}},
      {time: t(7), event: 'transition', agentId: 'quiet', from: 'stopped', to: 'spawning', reason: 'start'},
      {time: t(8), event: 'transition', agentId: 'quiet', from: 'spawning', to: 'running', reason: 'start'},
      stale(20),
    ], 'p')
    expect(f.map((x) => x.title)).toEqual(['silent; left running', 'stopped by user', 'silent; left running'])
  })

  it('counts nothing the user acknowledged: an acknowledged agent adds nothing until something new happens', () => {
    const events: EngineEvent[] = [stale(0), stale(10),
      {time: t(15), event: 'attention:acknowledged', agentId: 'quiet', reason: 'silent, left running'}, stale(20), stale(30)]
    const f = feedOf(events, 'p')
    expect(f.map((x) => x.title)).toEqual(['acknowledged', 'silent; left running'])
    expect(unread(f, 0)).toBe(0)
    // Something new afterwards counts.
    const g = feedOf([...events, {time: t(40), event: 'transition', agentId: 'quiet', from: 'running', to: 'failed', reason: 'exit', data: {exitReason: 'failed', exitCode: 2}}], 'p')
    expect(unread(g, 0)).toBe(1)
  })

  it('folds a crash loop into one entry with its count and its latest restart; acknowledged crashes stay quiet', () => {
    const crash = (s: number, n: number, extra: Record<string, unknown> = {}): EngineEvent[] => [
      {time: t(s), event: 'transition', agentId: 'loop', from: 'running', to: 'failed', reason: 'exit', data: {exitReason: 'failed', exitCode: 1, ...extra}},
      {time: t(s), event: 'keep-alive:scheduled', agentId: 'loop', data: {at: t(s + 2 ** n), failures: n, ...extra}},
      {time: t(s + 2 ** n), event: 'transition', agentId: 'loop', from: 'failed', to: 'spawning', reason: 'keep-alive restart'},
      {time: t(s + 2 ** n), event: 'transition', agentId: 'loop', from: 'spawning', to: 'running', reason: 'keep-alive restart'},
    ]
    const events = [...crash(0, 1), ...crash(2, 2), ...crash(6, 3), ...crash(14, 4), ...crash(30, 5),
      {time: t(40), event: 'attention:acknowledged', agentId: 'loop', reason: 'crash loop: 5 crashes in a row'},
      ...crash(62, 6, {acknowledged: true}), ...crash(122, 7, {acknowledged: true})]
    const f = feedOf(events, 'p')
    expect(f.map((x) => [x.title, x.reason])).toEqual([
      ['acknowledged', 'crash loop: 5 crashes in a row'],
      ['failed', 'exit code 1 · 7 times in a row · restart scheduled in 128 s, 7 failures in a row'],
    ])
    expect(f[1].lastTime).toBe(t(122))
    expect(unread(f, 0)).toBe(0)
    expect(unread(feedOf(events.slice(0, 12), 'p'), 0)).toBe(1)
    // A crash that ends otherwise is a change: an entry of its own.
    const changed = feedOf([...events, {time: t(300), event: 'transition', agentId: 'loop', from: 'running', to: 'failed', reason: 'exit', data: {exitReason: 'failed', exitCode: 3}}], 'p')
    expect(changed[0]).toMatchObject({title: 'failed', reason: 'exit code 3'})
    expect(unread(changed, 0)).toBe(1)
  })
})
