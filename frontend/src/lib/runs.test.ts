import {describe, expect, it} from 'vitest'
import type {EngineEvent} from '../api'
import {lineStarts, placeMarkers, runCounts, runsFromEvents, runTitle, utf8Length} from './runs'

const t = (s: number) => new Date(Date.parse('2026-05-01T12:00:00Z') + s * 1000).toISOString()
const tr = (s: number, from: string, to: string, reason: string, data?: Record<string, unknown>): EngineEvent =>
  ({time: t(s), event: 'transition', agentId: 'a', from, to, reason, data})

const EVENTS: EngineEvent[] = [
  tr(1, 'not_started', 'spawning', 'start'),
  tr(2, 'spawning', 'running', 'start', {logOffset: 0}),
  {time: t(3), event: 'session', agentId: 'a', data: {sessionId: '5f0c1234-aaaa'}},
  {time: t(300), event: 'recovery', agentId: 'a', data: {found: 'stale', action: 'resume'}},
  tr(301, 'running', 'interrupted', 'exit', {exitReason: 'stale'}),
  tr(302, 'interrupted', 'spawning', 'auto-resume'),
  tr(303, 'spawning', 'running', 'auto-resume', {logOffset: 20}),
  {time: t(304), event: 'session', agentId: 'a', data: {sessionId: '77aa0000-bbbb'}},
  tr(400, 'running', 'stopping', 'stop'),
  tr(401, 'stopping', 'stopped', 'stopped_by_user', {exitReason: 'stopped_by_user'}),
  {time: t(410), event: 'transition', agentId: 'other', from: 'spawning', to: 'running', reason: 'start'},
  tr(500, 'stopped', 'spawning', 'resume'),
  tr(501, 'spawning', 'running', 'resume', {logOffset: 40}),
]

describe('runs', () => {
  it('reads each run’s cause, session and the previous run’s end from the events', () => {
    const runs = runsFromEvents(EVENTS, 'a', 300)
    expect(runs.map(runTitle)).toEqual([
      'Run 1 · started by you · session 5f0c1234…',
      'Run 2 · auto-resumed after 5 min silent · session 77aa0000…',
      'Run 3 · resumed by you',
    ])
    expect(runs.map((r) => r.prevEnd)).toEqual([undefined, 'silent too long; killed', 'stopped by user'])
    expect(runs.map((r) => r.end)).toEqual(['silent too long; killed', 'stopped by user', undefined])
    expect(runs.map((r) => r.logOffset)).toEqual([0, 20, 40])
  })

  it('shows the user’s message a run resumed with as the user’s turn', () => {
    const runs = runsFromEvents([...EVENTS,
      tr(600, 'running', 'completed', 'exit', {exitReason: 'completed'}),
      {time: t(610), event: 'message', agentId: 'a', data: {message: 'now the tests'}},
      tr(611, 'completed', 'spawning', 'resume'),
      tr(612, 'spawning', 'running', 'resume', {logOffset: 60}),
    ], 'a')
    expect(runs.map((r) => r.prompt)).toEqual([undefined, undefined, undefined, 'now the tests'])
    expect(runTitle(runs[3])).toBe('Run 4 · resumed with your message')
  })

  it('orders by time whatever the order given', () => {
    const runs = runsFromEvents(EVENTS.slice().reverse(), 'a')
    expect(runs.map((r) => r.cause)).toEqual(['started by you', 'auto-resumed after it went silent', 'resumed by you'])
  })

  it('counts bytes as the log file does', () => {
    expect(utf8Length('abc')).toBe(3)
    expect(utf8Length('é')).toBe(2)
    expect(utf8Length('€')).toBe(3)
    expect(utf8Length('😀')).toBe(4)
    // "0123456789\n" x2 then "é\n": 11 + 11 + 3 bytes.
    expect(lineStarts(['0123456789', '0123456789', 'é'], 25)).toEqual([0, 11, 22])
  })

  it('places markers by log offset, the earliest one held heading the view', () => {
    const runs = runsFromEvents(EVENTS, 'a')
    const lines = ['run1 a', 'run1 b', 'run2 a', 'run2 b', 'run3 a']
    // Offsets 0,7,14… do not match the runs' (0/20/40): markers go before the first line at or past each.
    const starts = [0, 10, 20, 30, 40]
    expect(placeMarkers(runs, lines, starts).map((m) => [m.run.n, m.line])).toEqual([[1, 0], [2, 2], [3, 4]])
    // A tail that begins inside run 2: run 2 heads it, marked as begun earlier.
    const tail = placeMarkers(runs, lines.slice(3), starts.slice(3))
    expect(tail.map((m) => [m.run.n, m.line, !!m.earlier])).toEqual([[2, 0, true], [3, 1, false]])
  })

  it('without offsets, places a stream-json log’s runs at its init lines; other logs get none', () => {
    const noOffsets = runsFromEvents(EVENTS.map((e) => ({...e, data: e.data && {...e.data, logOffset: undefined}})), 'a')
    const init = '{"type":"system","subtype":"init","session_id":"x"}'
    const lines = ['old', init, 'a', init, 'b']
    expect(placeMarkers(noOffsets, lines, [0, 1, 2, 3, 4]).map((m) => [m.run.n, m.line])).toEqual([[2, 1], [3, 3]])
    expect(placeMarkers(noOffsets, ['plain', 'text'], null)).toEqual([])
    expect(placeMarkers([], lines, null)).toEqual([])
  })
})

describe('runCounts', () => {
  it('counts the runs each agent started, as the run picker lists them', () => {
    const ev = (agentId: string, from: string, to: string) => ({time: '2026-05-01T12:00:00Z', event: 'transition', agentId, from, to})
    expect(runCounts([ev('a', 'not_started', 'spawning'), ev('a', 'spawning', 'running'), ev('a', 'running', 'completed'),
      ev('a', 'completed', 'spawning'), ev('a', 'spawning', 'running'), ev('b', 'spawning', 'failed'), ev('c', 'spawning', 'running')]))
      .toEqual({a: 2, c: 1})
  })
})
