import {describe, expect, it} from 'vitest'
import {agent} from '../test/fixtures'
import type {Project} from '../api'
import {budgetFlags, budgetQuestion, budgetReached, dailyText, limitsText, spendText, suggestedRaise} from './budget'
import {statusView} from './status'

const project = (p: Partial<Project>): Project =>
  ({id: 'p1', name: 'demo', path: '/d', createdAt: '', loaded: true, agents: 0, running: 0, attention: 0, ...p})

describe('budgets in words', () => {
  it('says the limits and the spend against the budget', () => {
    expect(limitsText({maxBudgetUsd: 5, maxTurns: 40})).toBe('$5.00 and 40 turns per run')
    expect(limitsText({maxTurns: 40})).toBe('40 turns per run')
    expect(limitsText({})).toBe('')
    expect(spendText(agent({maxBudgetUsd: 5, lastResult: {costUsd: 1.2}}))).toBe('$1.20 / $5.00')
    expect(spendText(agent({maxBudgetUsd: 5}))).toBe('$0.00 / $5.00')
    expect(spendText(agent({lastResult: {costUsd: 1.2}}))).toBe('')
  })

  it('shows a budget pause as "budget reached", a plain pause as paused', () => {
    const a = agent({status: 'paused', budgetPause: 'run', pauseNote: 'budget: $5.00 per run reached ($5.12)'})
    expect(budgetReached(a)).toBe(true)
    expect(statusView(a)).toMatchObject({label: 'budget reached', tone: 'warn', detail: 'budget: $5.00 per run reached ($5.12)'})
    expect(budgetReached(agent({status: 'paused'}))).toBe(false)
    expect(statusView(agent({status: 'paused', pauseNote: 'lunch'}))).toMatchObject({label: 'paused', tone: 'idle'})
  })

  it('asks about the limit that was reached', () => {
    expect(budgetQuestion(agent({budgetPause: 'turns', maxTurns: 40}))).toEqual({what: 'turns per run', unit: 'turns', current: 40})
    expect(budgetQuestion(agent({budgetPause: 'daily'}), project({dailyBudgetUsd: 20})).current).toBe(20)
    expect(budgetQuestion(agent({budgetPause: 'run', maxBudgetUsd: 5})).unit).toBe('$')
    expect(suggestedRaise(5, '$')).toBe(10)
    expect(suggestedRaise(40, 'turns')).toBe(80)
    expect(suggestedRaise(0, '$')).toBe(5)
  })

  it("says today's cost against the daily budget", () => {
    expect(dailyText(project({}), 3.2)).toBe('$3.20 today')
    expect(dailyText(project({dailyBudgetUsd: 20}), 3.2)).toBe('$3.20 of $20 today')
    expect(dailyText(project({dailyBudgetUsd: 20, budgetHeld: true}), 20.4)).toBe('daily budget reached · $20.40 of $20')
  })

  it("adds Claude Code's own flags, only for Claude Code", () => {
    expect(budgetFlags('claude-stream-json', 2.5, 40)).toEqual(['--max-budget-usd', '2.5', '--max-turns', '40'])
    expect(budgetFlags('claude-stream-json', 0, 0)).toEqual([])
    expect(budgetFlags('codex-json', 5, 0)).toEqual([])
  })
})
