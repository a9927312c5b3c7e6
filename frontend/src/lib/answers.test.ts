import {describe, expect, it} from 'vitest'
import type {Agent, Asked} from '../api'
import {askedFor, asking, canReply, windowText, missingAnswer, policyText, ruleProblem, suggestedRule, toggleChoice} from './answers'

const waiting = (what: string) => ({
  id: 'a', projectId: 'p', status: 'running',
  activity: {state: 'waiting', waiting: what, needsYou: true},
  attention: `waiting: ${what}`,
}) as unknown as Agent

const q = (over: Partial<Asked> = {}): Asked => ({
  id: 'q1', agentId: 'a', projectId: 'p', askedAt: '', input: {}, position: 1, summary: 'Bash: rm -rf build', tool: 'Bash',
  suggestions: ['Bash(rm -rf build)', 'Bash(rm:*)'], ...over,
})

describe('answers', () => {
  it('tells a permission from a choice', () => {
    expect(asking(waiting('permission for Bash: rm -rf build/'))).toBe('permission')
    expect(askedFor(waiting('permission for Bash: rm -rf build/'))).toBe('Bash: rm -rf build/')
    expect(asking(waiting('your choice'))).toBe('choice')
    expect(asking(waiting('input'))).toBe('')
    expect(asking(waiting('permission'))).toBe('') // a hook's, which Shepherd cannot answer
  })
  it('offers the narrowest rule', () => {
    expect(suggestedRule(q())).toBe('Bash(rm -rf build)')
    expect(suggestedRule(q({suggestions: null}))).toBe('')
  })
  it('says what is wrong with a rule as typed', () => {
    expect(ruleProblem('')).toMatch(/Type a rule/)
    expect(ruleProblem('(x)')).toMatch(/tool name/)
    expect(ruleProblem('Bash(npm test:*')).toMatch(/closing/)
    expect(ruleProblem('Bash(npm test:*)')).toBe('')
    expect(ruleProblem('WebSearch')).toBe('')
  })
  it('wants every question answered', () => {
    const asked = q({questions: [{question: 'A?', options: []}, {question: 'B?', options: []}]})
    expect(missingAnswer(asked, {'A?': 'x'})).toBe('B?')
    expect(missingAnswer(asked, {'A?': 'x', 'B?': ' '})).toBe('B?')
    expect(missingAnswer(asked, {'A?': 'x', 'B?': 'y'})).toBe('')
  })
  it('toggles the choices of a multiSelect question', () => {
    expect(toggleChoice('', 'a')).toBe('a')
    expect(toggleChoice('a', 'b')).toBe('a, b')
    expect(toggleChoice('a, b', 'a')).toBe('b')
  })
  it('words the policy', () => {
    expect(policyText(0)).toBe('waits for your answer')
    expect(policyText(5)).toBe('denied after 5 min without an answer')
  })
})

describe('canReply', () => {
  const base = {id: 'a', projectId: 'p', profile: 'claude-stream-json', status: 'completed', sessionId: 's1',
    resumeArgs: ['-p', '--resume', '{sessionId}', '--', 'continue']}
  const ag = (over: object) => ({...base, ...over}) as unknown as Agent
  it('lets a Claude or Codex agent whose run ended be sent a message', () => {
    expect(canReply(ag({}))).toBe('')
    expect(canReply(ag({profile: 'codex-json', status: 'failed'}))).toBe('')
    expect(canReply(ag({status: 'stopped'}))).toBe('')
  })
  it('says why not, or hides the box', () => {
    expect(canReply(ag({profile: ''}))).toBe('hidden')
    expect(canReply(ag({resumeArgs: []}))).toBe('hidden')
    expect(canReply(ag({status: 'running'}))).toMatch(/running/)
    expect(canReply(ag({status: 'queued'}))).toMatch(/queued/)
    expect(canReply(ag({status: 'paused'}))).toMatch(/paused/)
    expect(canReply(ag({sessionId: ''}))).toMatch(/No session/)
  })
})

describe('windowText', () => {
  const now = Date.parse('2026-11-26T12:00:00')
  it('says use and reset', () => {
    expect(windowText({name: 'five_hour', utilization: 0.82, resetsAt: new Date('2026-11-26T14:00:00').toISOString()}, now))
      .toBe('5-hour: 82 % · resets 14:00')
    expect(windowText({name: 'seven_day', status: 'rejected', utilization: -1, resetsAt: new Date('2026-11-28T08:45:00').toISOString()}, now))
      .toMatch(/^weekly: used up · resets .*08:45$/)
  })
  it('says nothing of a fresh or unknown window', () => {
    expect(windowText({name: 'five_hour', utilization: 0, resetsAt: '0001-01-01T00:00:00Z'}, now)).toBe('')
    expect(windowText({name: 'five_hour', utilization: -1, resetsAt: '0001-01-01T00:00:00Z'}, now)).toBe('')
  })
})
