// The window by keyboard alone (issue 26): the projects, the New agent
// dialog (the focus starts on its first field, Tab goes round inside it, Esc
// gives it back to the button that opened it), and the agents list as a
// treegrid — arrows move from row to row and into a row's cells, s acts on
// the row, the row's menu opens and closes by keys, and a dialog opened
// from the menu gives the focus back to the list when its agent is gone.
import {test} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {api, page, row, shots, waitStatus} from './lib.mjs'

/** What has the focus: its agent row (if in one), whether it is the row itself, its name, where it is. */
const focused = () => page.evaluate(() => {
  const el = document.activeElement
  const tr = el?.closest('tr[data-agent], tr[data-group-row]')
  return {
    agent: tr?.getAttribute('data-agent') ?? null,
    group: tr?.getAttribute('data-group-row') ?? null,
    row: !!tr && el === tr,
    name: (el?.getAttribute('aria-label') || el?.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 60),
    tag: el?.tagName ?? '',
    dialog: el?.closest('[role="dialog"]')?.getAttribute('aria-label') ?? null,
    menu: !!el?.closest('[role="menu"]'),
    project: !!el?.matches('button.project'),
    field: el?.getAttribute('name') ?? null,
  }
})

/** Presses key until the focus is where want says (at most n times); the focus then. */
async function pressUntil(key, want, n = 40) {
  for (let i = 0; i < n; i++) {
    const f = await focused()
    if (want(f)) return f
    await page.keyboard.press(key)
  }
  const f = await focused()
  assert.ok(want(f), `${key} ×${n} did not get there; the focus is on ${JSON.stringify(f)}`)
  return f
}

/** Waits until the focus is where want says. */
async function focusIs(want, what) {
  for (let i = 0; i < 50; i++) {
    if (want(await focused())) return
    await new Promise((r) => setTimeout(r, 100))
  }
  assert.fail(`the focus is not ${what}: ${JSON.stringify(await focused())}`)
}

export function keyboardTests() {
  test('keyboard only: a project, the New agent dialog (Tab goes round inside, Esc gives the focus back), the list by arrows, a row acted on', async () => {
    const close = page.getByRole('button', {name: 'Close activity'})
    if (await close.count()) await close.click()
    const dir = mkdtempSync(join(tmpdir(), 'shepherd-e2e-keys-'))
    const p = await api('POST', '/v1/projects', {path: dir, name: 'keyboard'})
    const agent = (id, script) => api('POST', `/v1/projects/${p.id}/agents`, {id, command: 'sh', args: ['-c', script], graceSec: 1})
    await agent('k-fail', 'echo no; exit 2')
    await agent('k-sleep', 'exec sleep 300')
    await agent('k-done', 'true')
    await api('POST', `/v1/projects/${p.id}/agents/k-fail/start`)
    await api('POST', `/v1/projects/${p.id}/agents/k-done/start`)

    await page.getByRole('navigation', {name: 'Projects'}).locator('button.project', {hasText: 'keyboard'}).waitFor()
    // From nothing: Tab reaches the projects (one of them in the Tab order); arrows go to "keyboard"; Enter shows it.
    await page.evaluate(() => (document.activeElement instanceof HTMLElement) && document.activeElement.blur())
    await pressUntil('Tab', (f) => f.project)
    await pressUntil('ArrowDown', (f) => f.project && f.name.startsWith('keyboard'))
    await page.keyboard.press('Enter')
    await page.getByRole('heading', {name: 'keyboard'}).waitFor()
    await waitStatus('k-fail', 'failed')
    await waitStatus('k-done', 'completed')

    // The New agent dialog: opened by Enter, the focus on its first field; Tab goes round inside it.
    await pressUntil('Tab', (f) => f.name === 'New agent')
    await page.keyboard.press('Enter')
    const dialog = page.getByRole('dialog', {name: 'New agent'})
    await dialog.waitFor()
    await focusIs((f) => f.dialog === 'New agent' && f.field === 'id', 'on the Id field')
    const seen = []
    for (let i = 0; i < 120; i++) {
      await page.keyboard.press('Tab')
      const f = await focused()
      assert.equal(f.dialog, 'New agent', `Tab ${i + 1} left the dialog: ${JSON.stringify(f)}`)
      seen.push(f.field ?? f.name)
      if (f.field === 'id') break
    }
    assert.equal(seen.at(-1), 'id', `Tab did not come round to the Id field: ${seen.join(', ')}`)
    assert.ok(seen.includes('Close') && seen.includes('Create and start') && seen.includes('command'), seen.join(', '))
    await page.keyboard.press('Shift+Tab')
    assert.equal((await focused()).dialog, 'New agent')
    await page.keyboard.press('Tab')
    await shots('keyboard-dialog')
    await page.keyboard.press('Escape')
    await dialog.waitFor({state: 'detached'})
    await focusIs((f) => f.name === 'New agent' && f.tag === 'BUTTON', 'back on New agent')

    // Into the list: one Tab stop, the first row (Needs you first); ↓ row by row.
    await pressUntil('Tab', (f) => f.row)
    assert.deepEqual(await focused().then((f) => [f.agent, f.row]), ['k-fail', true])
    await page.keyboard.press('ArrowDown')
    assert.equal((await focused()).group, 'idle')
    await pressUntil('ArrowDown', (f) => f.agent === 'k-sleep' && f.row, 4)
    assert.equal(await row('k-sleep').getAttribute('tabindex'), '0')
    assert.equal(await row('k-fail').getAttribute('tabindex'), '-1')
    await shots('keyboard-list')

    // s acts on the row the focus is on; → goes into its cells, End to its menu, which opens and closes by keys.
    await page.keyboard.press('s')
    await waitStatus('k-sleep', 'running')
    await focusIs((f) => f.agent === 'k-sleep' && f.row, 'on k-sleep after it started')
    await page.keyboard.press('ArrowRight')
    assert.deepEqual(await focused().then((f) => [f.agent, f.row, f.name]), ['k-sleep', false, 'k-sleep'])
    await page.keyboard.press('End')
    assert.equal((await focused()).name, 'More actions for k-sleep')
    await page.keyboard.press('Enter')
    await focusIs((f) => f.menu, 'in the menu')
    await shots('keyboard-menu', async () => {
      // Opened again at each size: it is placed by its button when it opens.
      await page.keyboard.press('Escape')
      await focusIs((f) => f.name === 'More actions for k-sleep', 'on ⋯')
      await page.keyboard.press('Enter')
      await focusIs((f) => f.menu, 'in the menu')
    })
    await page.keyboard.press('Escape')
    await focusIs((f) => f.name === 'More actions for k-sleep', 'back on ⋯')
    // The row's primary action by keyboard: Stop.
    await page.keyboard.press('ArrowLeft')
    assert.equal((await focused()).name, 'Stop')
    await page.keyboard.press('Enter')
    await waitStatus('k-sleep', 'stopped')
    // Stopped, it moves back to Idle: the focus moves with its row.
    await focusIs((f) => f.agent === 'k-sleep' && f.row, 'on the row')
    await page.keyboard.press('Enter')
    await page.getByRole('region', {name: 'Agent k-sleep'}).waitFor()
    await page.keyboard.press('Escape')
    await page.getByRole('region', {name: 'Agent k-sleep'}).waitFor({state: 'detached'})
    await focusIs((f) => f.agent === 'k-sleep' && f.row, 'still on the row')

    // Remove… from the menu: the question starts on Cancel; once the agent is gone, the focus is on the list's row.
    await page.keyboard.press('ArrowRight')
    await page.keyboard.press('End')
    await page.keyboard.press('Enter')
    await pressUntil('ArrowDown', (f) => f.menu && f.name === 'Remove…', 8)
    await page.keyboard.press('Enter')
    await page.getByRole('dialog', {name: 'Remove k-sleep'}).waitFor()
    await focusIs((f) => f.dialog === 'Remove k-sleep' && f.name === 'Cancel', 'on Cancel')
    await page.keyboard.press('Tab')
    assert.equal((await focused()).name, 'Remove')
    await page.keyboard.press('Enter')
    await row('k-sleep').waitFor({state: 'detached'})
    await focusIs((f) => f.row && !!f.agent, 'on a row of the list')
  })
}
