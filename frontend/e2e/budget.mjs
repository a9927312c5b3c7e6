// Budgets from the window: a Claude agent whose run reaches its budget per
// run is paused with the reason; the row says so, the detail asks the three
// answers, and raising resumes it; the daily budget in the settings shows in
// the header and, once reached, holds the project.
import {test} from 'node:test'
import assert from 'node:assert/strict'
import {api, page, row, shot, shots, showNewProject, waitStatus} from './lib.mjs'

const today = () => page.locator('.main-head [data-cost-today]')

export function budgetTests() {
  let project

  test('a run that reaches its budget is paused and asks: raise, resume once, or stop', async () => {
    project = await showNewProject('budgets')
    const stream = ['-p', '--verbose', '--output-format', 'stream-json']
    // The fake Claude reports $1.37 a run and, given --max-budget-usd 1, ends as the real CLI does.
    await api('POST', `/v1/projects/${project.id}/agents`, {
      id: 'spender', name: 'Refactor auth', command: 'claude', args: [...stream, '--', 'refactor the auth module'],
      profile: 'claude-stream-json', graceSec: 1, maxBudgetUsd: 1,
      resumeArgs: [...stream, '--resume', '{sessionId}', '--', 'continue'],
      env: {FAKE_CLAUDE_MODE: 'success', FAKE_CLAUDE_COST: '1.37'},
    })
    await api('POST', `/v1/projects/${project.id}/agents`, {
      id: 'cheap', command: 'claude', args: [...stream, '--', 'tidy the README'], profile: 'claude-stream-json',
      graceSec: 1, maxBudgetUsd: 5, env: {FAKE_CLAUDE_MODE: 'success', FAKE_CLAUDE_COST: '0.42'},
    })
    // The daily budget, through the settings dialog.
    await page.getByRole('button', {name: 'Project settings'}).click()
    const settings = page.getByRole('dialog', {name: /Settings of/})
    await settings.locator('[name="dailyBudgetUsd"]').fill('20')
    await settings.getByRole('button', {name: 'Save'}).click()
    await settings.waitFor({state: 'detached'})

    await api('POST', `/v1/projects/${project.id}/agents/cheap/start`)
    await api('POST', `/v1/projects/${project.id}/agents/spender/start`)
    await waitStatus('cheap', 'completed')
    await waitStatus('spender', 'paused')
    await row('spender').getByText('budget reached').waitFor()
    await row('spender').locator('[data-spend]', {hasText: '$1.37 / $1.00'}).waitFor()
    await row('cheap').locator('[data-spend]', {hasText: '$0.42 / $5.00'}).waitFor()
    await today().getByText('$1.79 of $20.00 today').waitFor()
    const rec = await api('GET', `/v1/projects/${project.id}/agents/spender`)
    assert.equal(rec.pauseNote, 'budget: $1.00 per run reached ($1.37)')
    assert.equal(rec.budgetPause, 'run')

    await row('spender').click()
    const panel = page.getByRole('alert', {name: 'Budget reached'})
    await panel.getByText('budget: $1.00 per run reached ($1.37)').waitFor()
    // Double what the run reached ($1.37 past its $1.00), never less than it.
    assert.equal(await panel.locator('[name="limit"]').inputValue(), '2.74')
    await shots('budget-reached')

    await panel.locator('[name="limit"]').fill('3')
    await panel.getByRole('button', {name: 'Raise and resume'}).click()
    await waitStatus('spender', 'completed')
    await panel.waitFor({state: 'detached'})
    await row('spender').locator('[data-spend]', {hasText: '$1.37 / $3.00'}).waitFor()
    const after = await api('GET', `/v1/projects/${project.id}/agents/spender`)
    assert.equal(after.maxBudgetUsd, 3)
    assert.equal(after.resumeCount, 1)
  })

  test('the daily budget reached holds the project: the header says so, a start waits in the queue', async () => {
    const s = await api('GET', `/v1/projects/${project.id}/settings`)
    await api('PUT', `/v1/projects/${project.id}/settings`, {...s, dailyBudgetUsd: 2})
    await today().getByText('daily budget reached · $3.16 of $2.00').waitFor()
    await api('POST', `/v1/projects/${project.id}/agents/cheap/start`)
    await waitStatus('cheap', 'queued')
    await shot('budget-daily-1280-light')
    await api('PUT', `/v1/projects/${project.id}/settings`, {...s, dailyBudgetUsd: 0})
    await waitStatus('cheap', 'completed')
  })
}
