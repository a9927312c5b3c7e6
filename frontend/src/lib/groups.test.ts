import {describe, expect, it} from 'vitest'
import {agent, at, NOW} from '../test/fixtures'
import {attentionReason, countGroups, filterAgents, groupAgents, groupOf, sortAgents, stoppable} from './groups'

describe('groupOf', () => {
  it.each([
    ['failed', {status: 'failed', exitReason: 'failed', exitCode: 3}, 'attention', 'failed'],
    ['resume limit', {status: 'failed', exitReason: 'resume_limit'}, 'attention', 'auto-resume limit reached'],
    ['stale left running', {status: 'running', stale: true}, 'attention', 'silent, left running'],
    ['interrupted, reason unknown', {status: 'interrupted', exitReason: 'exited_while_app_closed'}, 'attention', 'interrupted, reason unknown'],
    ['restart loop', {status: 'failed', keepAlive: true, desired: 'running', restartFailureCount: 3, nextRestartAt: at(-30)}, 'attention', 'restart loop (3 failures in a row)'],
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
    const a = agent(patch)
    expect(groupOf(a)).toBe(group)
    expect(attentionReason(a)).toBe(reason)
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
