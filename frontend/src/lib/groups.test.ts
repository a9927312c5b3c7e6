import {describe, expect, it} from 'vitest'
import type {Agent} from '../api'
import {agent, at, NOW} from '../test/fixtures'
import {acknowledgeable, attentionReason, countGroups, goSeconds, filterAgents, groupAgents, groupOf, runsOf, sortAgents, stoppable} from './groups'

describe('groupOf', () => {
  it.each([
    ['failed', {status: 'failed', exitReason: 'failed', exitCode: 3}, 'attention', 'failed'],
    ['resume limit', {status: 'failed', exitReason: 'resume_limit'}, 'attention', 'auto-resume limit reached'],
    ['stale left running', {status: 'running', stale: true}, 'attention', 'silent, left running'],
    ['interrupted, reason unknown', {status: 'interrupted', exitReason: 'exited_while_app_closed'}, 'attention', 'interrupted, reason unknown'],
    ['crash loop', {status: 'failed', keepAlive: true, desired: 'running', restartFailureCount: 5, nextRestartAt: at(-32)}, 'attention', 'crash loop: 5 crashes in a row, next try in 32s'],
    ['crash loop, its restart due', {status: 'failed', keepAlive: true, desired: 'running', restartFailureCount: 6, nextRestartAt: at(1)}, 'attention', 'crash loop: 6 crashes in a row, restarting'],
    ['crash loop, running again', {status: 'running', keepAlive: true, desired: 'running', restartFailureCount: 7}, 'attention', 'crash loop: 7 crashes in a row'],
    ['4 crashes: not a loop yet', {status: 'failed', keepAlive: true, desired: 'running', restartFailureCount: 4, nextRestartAt: at(-30)}, 'working', ''],
    ['5 failures without keep-alive', {status: 'completed', keepAlive: false, desired: 'running', restartFailureCount: 5}, 'idle', ''],
    ['waiting for a permission', {status: 'running', activity: {state: 'waiting', waiting: 'permission for Bash', needsYou: true}}, 'attention', 'waiting: permission for Bash'],
    ['waiting for input', {status: 'running', activity: {state: 'waiting', waiting: 'input', needsYou: true}}, 'attention', 'waiting: input'],
    ['rate-limited: not for the user', {status: 'running', activity: {state: 'waiting', waiting: 'rate limit until 14:05:00', needsYou: false}}, 'working', ''],
    ['acknowledged failure', {status: 'failed', exitReason: 'failed', acknowledgedAt: at(10)}, 'idle', ''],
    ['acknowledged silence', {status: 'running', stale: true, acknowledgedAt: at(10)}, 'working', ''],
    ['a budget pause', {status: 'paused', budgetPause: 'run', pausedAt: at(60)}, 'attention', 'budget reached'],
    ['a budget pause with its note', {status: 'paused', budgetPause: 'run', pauseNote: 'budget reached: $5.00 per run', pausedAt: at(60)}, 'attention', 'budget reached: $5.00 per run'],
    ["the engine's reason", {status: 'running', attention: 'waiting: permission for Edit'}, 'attention', 'waiting: permission for Edit'],
    ['a start error', {status: 'not_started', error: "Failed to start process 'x': exec: not found"}, 'attention', 'could not start'],
    ['running', {status: 'running'}, 'working', ''],
    ['spawning', {status: 'spawning'}, 'working', ''],
    ['stopping', {status: 'stopping'}, 'working', ''],
    ['timed out (live)', {status: 'timed_out'}, 'working', ''],
    ['queued', {status: 'queued', queuePosition: 2}, 'working', ''],
    ['restarting after a failure', {status: 'failed', keepAlive: true, desired: 'running', restartFailureCount: 1, nextRestartAt: at(-5)}, 'working', ''],
    ['completed', {status: 'completed', exitReason: 'completed', exitCode: 0}, 'idle', ''],
    ['stopped', {status: 'stopped', exitReason: 'stopped_by_user'}, 'idle', ''],
    ['not started', {status: 'not_started'}, 'idle', ''],
    ['paused', {status: 'paused', pausedAt: at(60)}, 'idle', ''],
  ] as const)('%s', (_n, patch, group, reason) => {
    const a = agent(patch as Partial<Agent>)
    expect(groupOf(a, NOW)).toBe(group)
    expect(attentionReason(a, NOW)).toBe(reason)
  })

  it("counts a crash loop's next try down from the engine's reason", () => {
    const a = agent({status: 'failed', keepAlive: true, desired: 'running', restartFailureCount: 5, nextRestartAt: at(-20),
      attention: 'crash loop: 5 crashes in a row, next try in 32s'})
    expect(attentionReason(a, NOW)).toBe('crash loop: 5 crashes in a row, next try in 20s')
  })

  it('an acknowledged agent can no longer be acknowledged only when nothing is wrong', () => {
    expect(acknowledgeable(agent({status: 'failed', acknowledgedAt: at(5)}), NOW)).toBe(true)
    expect(acknowledgeable(agent({status: 'completed'}), NOW)).toBe(false)
    expect(acknowledgeable(agent({status: 'running', attention: 'waiting: input'}), NOW)).toBe(true)
  })

  it('prints seconds as Go does', () => {
    expect(goSeconds(32_000)).toBe('32s')
    expect(goSeconds(64_400)).toBe('1m4s')
    expect(goSeconds(3_605_000)).toBe('1h0m5s')
    expect(goSeconds(300)).toBe('0s')
  })

  it('a stopped loop is not a loop any more', () => {
    expect(groupOf(agent({status: 'stopped', keepAlive: true, desired: 'stopped', restartFailureCount: 5}))).toBe('idle')
  })
})

describe('groupAgents and sortAgents', () => {
  const list = [
    agent({id: 'b-idle', status: 'completed', startedAt: at(600), stoppedAt: at(500)}),
    agent({id: 'a-run', status: 'running', startedAt: at(100), totals: {runs: 2, costUsd: 0.5}}),
    agent({id: 'c-fail', status: 'failed', exitReason: 'failed', startedAt: at(50), stoppedAt: at(40)}),
    agent({id: 'd-run', status: 'running', startedAt: at(1000), lastResult: {costUsd: 1.25}}),
    agent({id: 'e-new', status: 'not_started'}),
  ]

  it('puts what needs the user first, then working, then idle; empty groups left out', () => {
    const g = groupAgents(list, {key: 'default', desc: false}, NOW)
    expect(g.map((x) => [x.group, x.agents.map((a) => a.id)])).toEqual([
      ['attention', ['c-fail']],
      ['working', ['a-run', 'd-run']],
      ['idle', ['b-idle', 'e-new']],
    ])
    expect(groupAgents([agent({status: 'running'})], {key: 'name', desc: false}).map((x) => x.group)).toEqual(['working'])
  })

  it('sorts by a column, both ways, ties by name', () => {
    const ids = (key: Parameters<typeof sortAgents>[1]['key'], desc = false) =>
      sortAgents(list, {key, desc}, NOW).map((a) => a.id)
    expect(ids('name')).toEqual(['a-run', 'b-idle', 'c-fail', 'd-run', 'e-new'])
    expect(ids('name', true)).toEqual(['e-new', 'd-run', 'c-fail', 'b-idle', 'a-run'])
    expect(ids('runtime', true).slice(0, 2)).toEqual(['d-run', 'a-run'])
    expect(ids('cost', true).slice(0, 2)).toEqual(['d-run', 'a-run'])
    expect(ids('started', true)[0]).toBe('c-fail')
  })

  it('counts the groups and filters by words and chips', () => {
    expect(countGroups(list)).toEqual({attention: 1, working: 2, idle: 2})
    expect(filterAgents(list, 'run').map((a) => a.id)).toEqual(['a-run', 'd-run'])
    expect(filterAgents(list, 'RUNNING d').map((a) => a.id)).toEqual(['d-run'])
    expect(filterAgents(list, '', new Set(['attention', 'idle'] as const)).map((a) => a.id)).toEqual(['b-idle', 'c-fail', 'e-new'])
  })

  it('stop all covers live, queued and restarting agents', () => {
    expect(stoppable(agent({status: 'running'}))).toBe(true)
    expect(stoppable(agent({status: 'queued'}))).toBe(true)
    expect(stoppable(agent({status: 'failed', nextRestartAt: at(-5)}))).toBe(true)
    expect(stoppable(agent({status: 'failed'}))).toBe(false)
  })
})

describe('runsOf', () => {
  it("shows the engine's count of runs, however many events the window read", () => {
    const a = agent({status: 'completed', startedAt: at(60), restartCount: 1, resumeCount: 1, runCount: 40})
    expect(runsOf(a, 7)).toBe(40)
  })
  it('without a count (an older engine): what the events and the record show', () => {
    const a = agent({status: 'completed', startedAt: at(60), restartCount: 1, resumeCount: 1})
    expect(runsOf(a)).toBe(3)
    expect(runsOf(a, 7)).toBe(7)
    expect(runsOf(agent({status: 'not_started'}))).toBe(0)
  })
})
