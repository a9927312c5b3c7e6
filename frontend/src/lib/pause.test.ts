import {describe, expect, it} from 'vitest'
import type {Project} from '../api'
import {agent, at, NOW, project as fixture, type Patch} from '../test/fixtures'
import {causeText, describe as describeEvent} from './feed'
import {
  engineText, loadText, ordinal, pausedDetail, pausedSince, pauseProgress, progressText, queuedFor, queueLabel,
} from './pause'

const project = (patch: Patch<Project> = {}): Project =>
  fixture({name: 'app', path: '/src/app', createdAt: at(9999), agents: 5, ...patch})

describe('queue texts', () => {
  it('ordinals', () => {
    expect([1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111].map(ordinal))
      .toEqual(['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '23rd', '101st', '111th'])
  })
  it('a queued agent says its place and what it waits to do', () => {
    expect(queueLabel({queuePosition: 2})).toBe('queued · 2nd')
    expect(queueLabel({})).toBe('queued')
    expect(queuedFor('unpause')).toBe('to resume')
    expect(queuedFor('keep-alive restart')).toBe('to restart')
    expect(queuedFor('something new')).toBe('something new')
    expect(queuedFor(undefined)).toBe('')
  })
})

describe('a project’s load', () => {
  it('running of the limit, and the queue', () => {
    expect(loadText(project({live: 3, maxRunning: 4, queued: 2}))).toBe('3/4 running · 2 queued')
    expect(loadText(project({live: 3, maxRunning: 0}))).toBe('3 running')
    expect(loadText(project({live: undefined, running: 2}))).toBe('2 running')
  })
  it('paused, and still pausing', () => {
    expect(loadText(project({paused: true, queued: 1}))).toBe('paused · 1 queued')
    expect(loadText(project({paused: true, live: 2, maxRunning: 4}))).toBe('pausing · 2 running')
  })
  it('the banner says since when', () => {
    expect(pausedSince(project({paused: true, pausedAt: at(300)}), NOW)).toMatch(/^Paused 5 min ago \(.+\)$/)
    expect(pausedSince(project({paused: true}), NOW)).toBe('Paused')
  })
})

describe('paused agents', () => {
  it('say their note, and whether their project paused them', () => {
    expect(pausedDetail({pauseNote: 'rate limit', pausedWithProject: false})).toBe('rate limit')
    expect(pausedDetail({pauseNote: 'rate limit', pausedWithProject: true})).toBe('rate limit')
    expect(pausedDetail({pausedWithProject: true})).toBe('with the project')
    expect(pausedDetail({})).toBe('')
  })
  it('a project pause counts the agents it began with', () => {
    const agents = [
      agent({id: 'a', status: 'paused'}),
      agent({id: 'b', status: 'stopping'}),
      agent({id: 'c', status: 'running', activity: {state: 'busy', tool: 'Bash'}}),
      agent({id: 'd', status: 'running'}), // started after: not waited for
    ]
    const p = pauseProgress(agents, ['a', 'b', 'c', 'gone'])
    expect(p).toEqual({done: 2, total: 4, waiting: 1})
    expect(progressText(p)).toBe('Pausing 4 agents… 2 paused; 1 finishing a tool call first')
    expect(progressText({done: 0, total: 1, waiting: 0})).toBe('Pausing 1 agent… 0 paused')
  })
  it('a run after a pause is marked as such', () => {
    expect(causeText('unpause')).toBe('resumed after a pause')
  })
})

describe('the feed traces pauses', () => {
  it('a pause by hand is not unread; one by the signal file is', () => {
    const byHand = describeEvent({time: at(5), event: 'project:paused', reason: 'pause', data: {note: 'lunch'}}, 'p1', 0)
    expect(byHand).toMatchObject({title: 'project paused', byUser: true, reason: '“lunch”'})
    const byFile = describeEvent({time: at(5), event: 'project:paused', reason: 'pause_signal created'}, 'p1', 1)
    expect(byFile).toMatchObject({title: 'project paused', byUser: false, level: 'warning', reason: 'pause_signal created'})
    expect(describeEvent({time: at(5), event: 'transition', agentId: 'x', from: 'not_started', to: 'queued', reason: 'queued: start'}, 'p1', 2))
      .toMatchObject({title: 'queued', reason: 'waits to start', byUser: true})
  })
})

describe('the engine indicator', () => {
  it('embedded, attached, lost, none', () => {
    expect(engineText({state: 'embedded', url: 'http://127.0.0.1:5', pid: 9, dataDir: '/d'}).text).toBe('Engine: this window')
    const att = engineText({state: 'attached', url: 'http://127.0.0.1:5', pid: 1234, dataDir: '/d'})
    expect(att).toMatchObject({text: 'Attached to an engine', detail: 'pid 1234 · http://127.0.0.1:5'})
    expect(att.title).toContain('http://127.0.0.1:5')
    expect(engineText({state: 'lost', url: '', pid: 1234, dataDir: '', message: 'gone'})).toMatchObject({tone: 'bad', title: 'gone'})
    expect(engineText({state: 'none', url: '', pid: 0, dataDir: '', message: 'locked'})).toMatchObject({text: 'No engine', title: 'locked'})
    expect(engineText(undefined).tone).toBe('warn')
  })
})
