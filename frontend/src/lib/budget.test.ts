import {describe, expect, it} from 'vitest'
import {agent, project as fixture, type Patch} from '../test/fixtures'
import type {Project} from '../api'
import {budgetFlags, budgetQuestion, budgetReached, dailyText, limitsText, raiseProblem, reachedOf, spendText, suggestedRaise, withBudgetFlags} from './budget'
import {statusView} from './status'
import {attentionReason, groupOf} from './groups'

const project = (p: Patch<Project>): Project => fixture({name: 'demo', path: '/d', ...p})

describe('budgets in words', () => {
  it('says the limits and the spend against the budget', () => {
    expect(limitsText({maxBudgetUsd: 5, maxTurns: 40})).toBe('$5.00 and 40 turns per run')
    expect(limitsText({maxTurns: 40})).toBe('40 turns per run')
    expect(limitsText({})).toBe('')
    expect(spendText(agent({maxBudgetUsd: 5, lastResult: {costUsd: 1.2}}))).toBe('$1.20 / $5.00')
    expect(spendText(agent({maxBudgetUsd: 5}))).toBe('$0.00 / $5.00')
    expect(spendText(agent({maxBudgetUsd: 0.0002, lastResult: {costUsd: 0.0003}}))).toBe('$0.0003 / $0.0002')
    expect(limitsText({maxBudgetUsd: 0.0002})).toBe('$0.0002 per run')
    expect(spendText(agent({lastResult: {costUsd: 1.2}}))).toBe('')
  })

  it('shows a budget pause as "budget reached", a plain pause as paused', () => {
    const a = agent({status: 'paused', budgetPause: 'run', pauseNote: 'budget: $5.00 per run reached ($5.12)'})
    expect(budgetReached(a)).toBe(true)
    expect(statusView(a)).toMatchObject({label: 'budget reached', tone: 'warn', detail: 'budget: $5.00 per run reached ($5.12)'})
    expect(budgetReached(agent({status: 'paused'}))).toBe(false)
    expect(statusView(agent({status: 'paused', pauseNote: 'lunch'}))).toMatchObject({label: 'paused', tone: 'idle'})
    // It asks the user: Needs you.
    expect(groupOf(a)).toBe('attention')
    expect(attentionReason(a)).toBe('budget: $5.00 per run reached ($5.12)') // the engine's reason: the pause note
    expect(groupOf(agent({status: 'paused', pauseNote: 'lunch'}))).toBe('idle')
  })

  it('asks about the limit that was reached', () => {
    expect(budgetQuestion(agent({budgetPause: 'turns', maxTurns: 40}))).toEqual({what: 'turns per run', unit: 'turns', current: 40})
    expect(budgetQuestion(agent({budgetPause: 'daily'}), project({dailyBudgetUsd: 20})).current).toBe(20)
    expect(budgetQuestion(agent({budgetPause: 'run', maxBudgetUsd: 5})).unit).toBe('$')
    expect(suggestedRaise(5, '$')).toBe(10)
    expect(suggestedRaise(40, 'turns')).toBe(80)
    expect(suggestedRaise(0, '$')).toBe(5)
    // Sub-cent: raised in sub-cents, always above what was reached.
    expect(suggestedRaise(0.0002, '$')).toBe(0.0004)
    expect(suggestedRaise(0.00031, '$')).toBe(0.00062)
    for (const v of [0.0001, 0.0002, 0.000123, 0.004, 0.015, 1.234567, 5.12, 20.4]) {
      expect(suggestedRaise(v, '$')).toBeGreaterThan(v)
    }
  })

  it('takes a raise only above what was reached, never 0 or empty', () => {
    const a = agent({status: 'paused', budgetPause: 'run', maxBudgetUsd: 5, lastResult: {costUsd: 5.12}})
    expect(reachedOf(a)).toBe(5.12)
    expect(reachedOf(agent({budgetPause: 'turns', maxTurns: 3, lastResult: {turns: 4}}))).toBe(4)
    expect(reachedOf(agent({budgetPause: 'daily'}), project({dailyBudgetUsd: 1, costToday: 1.5}))).toBe(1.5)
    expect(raiseProblem('', 5.12, '$')).toBe('an amount of dollars')
    expect(raiseProblem('0', 5.12, '$')).toBe('above $5.12, what was reached')
    expect(raiseProblem('5.12', 5.12, '$')).toBe('above $5.12, what was reached')
    expect(raiseProblem('$5.13', 5.12, '$')).toBe('')
    expect(raiseProblem('4.5', 4, 'turns')).toBe('a whole number of turns')
    expect(raiseProblem('5', 4, 'turns')).toBe('')
  })

  it("says today's cost against the daily budget", () => {
    expect(dailyText(project({}), 3.2)).toBe('$3.20 today')
    expect(dailyText(project({dailyBudgetUsd: 20}), 3.2)).toBe('$3.20 of $20.00 today')
    expect(dailyText(project({dailyBudgetUsd: 20, budgetHeld: true}), 20.4)).toBe('daily budget reached · $20.40 of $20.00')
    // Sub-cent amounts keep their digits.
    expect(dailyText(project({dailyBudgetUsd: 0.0002, budgetHeld: true}), 0.0003)).toBe('daily budget reached · $0.0003 of $0.0002')
  })

  it('shows the arguments a run is given, flags before the "--"', () => {
    const a = {profile: 'claude-stream-json', maxBudgetUsd: 5, maxTurns: 40}
    expect(withBudgetFlags(a, ['-p', '--resume', 's', '--', 'continue']))
      .toEqual(['-p', '--resume', 's', '--max-budget-usd', '5', '--max-turns', '40', '--', 'continue'])
    expect(withBudgetFlags(a, ['-p', '--max-turns', '9'])).toEqual(['-p', '--max-turns', '9', '--max-budget-usd', '5'])
    expect(withBudgetFlags({profile: 'generic', maxBudgetUsd: 5}, ['x'])).toEqual(['x'])
  })

  it("adds Claude Code's own flags, only for Claude Code", () => {
    expect(budgetFlags('claude-stream-json', 2.5, 40)).toEqual(['--max-budget-usd', '2.5', '--max-turns', '40'])
    expect(budgetFlags('claude-stream-json', 0, 0)).toEqual([])
    expect(budgetFlags('codex-json', 5, 0)).toEqual([])
  })
})

describe('budgets in the activity feed', () => {
  it('tells a budget reached, the answer and the lift, once each', async () => {
    const {describe: line} = await import('./feed')
    const t = '2026-01-01T10:00:00Z'
    expect(line({time: t, event: 'budget:reached', agentId: 'a', reason: 'budget: $5.00 per run reached ($5.12)'}, 'p', 0))
      .toMatchObject({level: 'warning', title: 'budget reached; paused', reason: 'budget: $5.00 per run reached ($5.12)', byUser: false})
    expect(line({time: t, event: 'budget:reached', reason: 'daily budget $20.00 reached ($20.40 today)'}, 'p', 0))
      .toMatchObject({title: 'daily budget reached; agents paused, starts held'})
    expect(line({time: t, event: 'transition', agentId: 'a', to: 'paused', reason: 'budget'}, 'p', 0)).toBeNull()
    expect(line({time: t, event: 'budget:answer', agentId: 'a', data: {action: 'raise', limit: 10}}, 'p', 0))
      .toMatchObject({title: 'budget raised to $10.00', byUser: true})
    expect(line({time: t, event: 'budget:answer', agentId: 'a', data: {action: 'raise', limit: 0.0004, budget: 'run'}}, 'p', 0))
      .toMatchObject({title: 'budget raised to $0.0004'})
    expect(line({time: t, event: 'budget:answer', agentId: 'a', data: {action: 'raise', limit: 80, budget: 'turns'}}, 'p', 0))
      .toMatchObject({title: 'budget raised to 80 turns'})
    expect(line({time: t, event: 'budget:answer', agentId: 'a', data: {action: 'remove', budget: 'run'}}, 'p', 0))
      .toMatchObject({title: 'budget limit removed', byUser: true})
    expect(line({time: t, event: 'budget:answer', agentId: 'a', data: {action: 'once'}}, 'p', 0))
      .toMatchObject({title: 'resumed once past its budget'})
    expect(line({time: t, event: 'budget:daily-lifted'}, 'p', 0)).toMatchObject({title: 'daily budget lifted; paused agents resume'})
  })
})
