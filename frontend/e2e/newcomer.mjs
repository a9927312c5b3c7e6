// What a new user tripped on (issue 25), from the window: the feed records a
// quiet agent once, not once per check; money keeps its digits and a sub-cent
// budget is raised in sub-cents (never to "no limit"); tooltips leave with
// their target and never cover a menu; the header and the detail stay
// readable at 1024×700; the log search counts "1 / 1" at once; the PATH
// warning does not come and go while the command is typed.
import {test} from 'node:test'
import assert from 'node:assert/strict'
import {join} from 'node:path'
import {api, closeToasts, engine, NARROW, OUT, page, row, shot, shots, showNewProject, sleep, waitStatus, WIDE} from './lib.mjs'

const STREAM = ['-p', '--verbose', '--output-format', 'stream-json']
const tooltip = () => page.getByRole('tooltip')

/** The box of what the locator finds, in the page. */
const box = (loc) => loc.evaluate((el) => {
  const r = el.getBoundingClientRect()
  return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}
})
/** A project's events.jsonl, through the API. */
async function eventsOf(projectId) {
  const e = engine()
  const res = await fetch(`${e.url}/v1/projects/${projectId}/events`, {headers: {Authorization: `Bearer ${e.token}`}})
  assert.ok(res.ok, `events: ${res.status}`)
  return (await res.text()).split('\n').filter(Boolean).map((l) => JSON.parse(l))
}
/** Starts from the list alone: no feed panel over it (a test before may have left it open). */
async function plain() {
  const close = page.getByRole('button', {name: 'Close activity'})
  if (await close.count()) await close.click()
  await page.mouse.move(5, 5)
}
const overlaps = (a, b) => Math.min(a.right, b.right) > Math.max(a.left, b.left) && Math.min(a.bottom, b.bottom) > Math.max(a.top, b.top)

export function newcomerTests() {
  test('the feed after a minute of a quiet agent checked every 10 s: one entry, counted once, quiet once acknowledged', async () => {
    await plain()
    const p = await showNewProject('quiet-feed')
    await api('PUT', `/v1/projects/${p.id}/settings`, {staleCheckIntervalSec: 10, staleThresholdSec: 10})
    await api('POST', `/v1/projects/${p.id}/agents`, {id: 'napper', command: 'sh', args: ['-c', 'echo going to sleep; exec sleep 900'], graceSec: 1})
    await api('POST', `/v1/projects/${p.id}/agents/napper/start`)
    await waitStatus('napper', 'running')
    // Flagged after 10-20 s of silence; then a minute more of checks every 10 s.
    await page.locator('tbody[data-group="attention"] tr[data-agent="napper"]').waitFor({timeout: 40_000})
    await sleep(62_000)
    const events = await eventsOf(p.id)
    const recoveries = events.filter((e) => e.event === 'recovery' && e.agentId === 'napper')
    assert.equal(recoveries.length, 1, `recovery lines after a minute: ${JSON.stringify(recoveries)}`)
    await page.locator('[data-summary] [data-attention="1"]').waitFor()
    await closeToasts()
    const bell = page.locator('button.bell')
    assert.match(await bell.getAttribute('aria-label'), /^Activity: 1 new in this project,/)
    await bell.click()
    const feed = page.getByRole('complementary', {name: 'Activity'})
    await feed.locator('[data-feed-entry]').first().waitFor()
    const entries = feed.locator('[data-feed-entry]', {hasText: 'napper'})
    assert.equal(await entries.count(), 1)
    const text = await entries.first().textContent()
    assert.match(text, /silent; left running/)
    assert.match(text, /silent for \d+ s · still running; its log shows no end/)
    assert.doesNotMatch(text, /interrupted/)
    await shots('feed-quiet-agent', async () => {
      if (!(await feed.isVisible().catch(() => false))) await bell.click()
      await feed.waitFor()
    })
    await feed.getByRole('button', {name: 'Close activity'}).click()
    assert.match(await bell.getAttribute('aria-label'), /^Activity: 0 new in this project,/)

    // Acknowledged: it leaves Needs you, and more checks add nothing to the feed or the count.
    await api('POST', `/v1/projects/${p.id}/agents/napper/ack`)
    await page.locator('tbody[data-group="attention"] tr[data-agent="napper"]').waitFor({state: 'detached'})
    await sleep(25_000)
    const again = (await eventsOf(p.id)).filter((e) => e.event === 'recovery' && e.agentId === 'napper')
    assert.equal(again.length, 1, 'an acknowledged agent added to the feed')
    assert.match(await bell.getAttribute('aria-label'), /^Activity: 0 new in this project,/)
    await bell.click()
    await feed.locator('[data-feed-entry]', {hasText: 'acknowledged'}).waitFor()
    assert.equal(await feed.locator('[data-feed-entry]', {hasText: 'silent; left running'}).count(), 1)
    await shot('feed-quiet-agent-acknowledged-1280-light')
    await feed.getByRole('button', {name: 'Close activity'}).click()
    await api('POST', `/v1/projects/${p.id}/stop-all`)
  })

  test('a sub-cent budget: amounts keep their digits, the raise is prefilled above what was reached and never 0; the daily panel the same', async () => {
    await plain()
    const p = await showNewProject('sub-cent')
    await api('POST', `/v1/projects/${p.id}/agents`, {
      id: 'penny', name: 'Penny pincher', command: 'claude', args: [...STREAM, '--', 'count the pennies'],
      profile: 'claude-stream-json', graceSec: 1, maxBudgetUsd: 0.0002,
      resumeArgs: [...STREAM, '--resume', '{sessionId}', '--', 'continue'],
      env: {FAKE_CLAUDE_MODE: 'success', FAKE_CLAUDE_COST: '0.0003'},
    })
    await api('POST', `/v1/projects/${p.id}/agents/penny/start`)
    await waitStatus('penny', 'paused')
    await row('penny').locator('[data-spend]', {hasText: '$0.0003 / $0.0002'}).waitFor()
    await page.locator('.main-head [data-cost-today]', {hasText: '$0.0003 today'}).waitFor()
    await row('penny').locator('.agent-name').click()
    const panel = page.getByRole('alert', {name: 'Budget reached'})
    await panel.getByText('budget: $0.0002 per run reached ($0.0003)').waitFor()
    const limit = panel.locator('[name="limit"]')
    assert.equal(await limit.inputValue(), '0.0006')
    const raise = panel.getByRole('button', {name: 'Raise and resume'})
    await panel.getByText('Above $0.0003, what was reached.').waitFor()
    const helpBox = await box(panel.locator('#raise-help'))
    for (const bad of ['0', '', '0.0003']) {
      await limit.fill(bad)
      assert.equal(await raise.isDisabled(), true, `Raise takes ${JSON.stringify(bad)}`)
    }
    await panel.getByText('The new limit must be above $0.0003, what was reached.').waitFor()
    assert.deepEqual(await box(panel.locator('#raise-help')), helpBox, 'the message moved the form')
    await limit.fill('0')
    await shots('budget-sub-cent')
    await limit.fill('0.0004')
    await raise.click()
    await waitStatus('penny', 'completed')
    const rec = await api('GET', `/v1/projects/${p.id}/agents/penny`)
    assert.equal(rec.maxBudgetUsd, 0.0004)
    await row('penny').locator('[data-spend]', {hasText: '$0.0003 / $0.0004'}).waitFor()

    // The daily budget: reached in sub-cents, its panel the same, and only Remove the limit removes it.
    await api('PUT', `/v1/projects/${p.id}/settings`, {dailyBudgetUsd: 0.0008})
    await api('POST', `/v1/projects/${p.id}/agents`, {
      id: 'tester', command: 'claude', args: [...STREAM, '--', 'run the tests'], profile: 'claude-stream-json', graceSec: 1,
      resumeArgs: [...STREAM, '--resume', '{sessionId}', '--', 'continue'],
      env: {FAKE_CLAUDE_MODE: 'tool', FAKE_CLAUDE_TOOL_SECONDS: '1', FAKE_CLAUDE_AFTER_TOOL: 'hang', FAKE_CLAUDE_RESUME_MODE: 'success', FAKE_CLAUDE_COST: '0.0001'},
    })
    await api('POST', `/v1/projects/${p.id}/agents/tester/start`)
    await waitStatus('tester', 'running')
    await sleep(1500) // its tool call has ended: it hangs after it, a safe point
    await api('POST', `/v1/projects/${p.id}/agents/penny/start`) // $0.0003 more: $0.0009 today, past $0.0008
    await waitStatus('tester', 'paused')
    await page.locator('.main-head [data-cost-today]', {hasText: 'daily budget reached · $0.0009 of $0.0008'}).waitFor()
    await row('tester').locator('.agent-name').click()
    const daily = page.locator('[data-budget-panel="daily"]')
    await daily.getByText(/daily budget \$0\.0008 reached \(\$0\.0009 today\)/).waitFor()
    assert.equal(await daily.locator('[name="limit"]').inputValue(), '0.0018')
    await daily.locator('[name="limit"]').fill('0.0008')
    assert.equal(await daily.getByRole('button', {name: 'Raise and resume'}).isDisabled(), true)
    await shots('budget-daily-sub-cent')
    await daily.getByRole('button', {name: 'Remove the limit'}).click()
    await waitStatus('tester', 'completed')
    const s = await api('GET', `/v1/projects/${p.id}/settings`)
    assert.equal(s.dailyBudgetUsd, 0)
    await closeToasts()
  })

  test('tooltips leave with their target and never cover a menu; a row’s tooltip names its own row', async () => {
    await plain()
    const p = await showNewProject('tooltips')
    for (const id of ['alpha', 'bravo', 'charlie']) {
      await api('POST', `/v1/projects/${p.id}/agents`, {id, command: 'sh', args: ['-c', `echo ${id}; exec sleep 600`], graceSec: 1})
    }
    await row('charlie').waitFor()
    // The dialog's button: its tooltip goes when the dialog closes under a still pointer.
    await page.getByRole('button', {name: 'New agent'}).click()
    const dialog = page.getByRole('dialog', {name: 'New agent'})
    await dialog.getByRole('button', {name: 'Create and start'}).hover()
    await tooltip().getByText('Create it and start it now').waitFor()
    // Closed under the still pointer, by no press or key of the page's own (as when a save closes it).
    await page.evaluate(() => window.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape'})))
    await dialog.waitFor({state: 'detached'})
    await tooltip().waitFor({state: 'detached'})
    await sleep(1000)
    assert.equal(await tooltip().count(), 0, 'a tooltip stayed after its dialog closed')
    await shots('tooltip-after-dialog')

    // The row's menu: its tooltip goes at the press, the menu's items are never covered.
    const more = row('bravo').getByRole('button', {name: 'More actions for bravo'})
    await more.hover()
    await tooltip().waitFor()
    assert.equal(await tooltip().getAttribute('data-tip-for'), 'bravo')
    await more.click()
    const menu = page.getByRole('menu', {name: 'More actions for bravo'})
    await menu.waitFor()
    await sleep(1000)
    assert.equal(await tooltip().count(), 0, 'a tooltip over the open menu')
    const item = menu.getByRole('menuitem').first()
    await item.hover()
    await tooltip().waitFor()
    const tipBox = await box(tooltip())
    for (const it of await menu.getByRole('menuitem').all()) {
      assert.ok(!overlaps(tipBox, await box(it)), `the tooltip covers ${await it.textContent()}`)
    }
    await shot('tooltip-menu-1280-light')
    await page.keyboard.press('Escape')
    await menu.waitFor({state: 'detached'})

    // A re-sort under a still pointer: the tooltip goes; shown again, it names the row under the pointer.
    const cell = row('alpha').locator('td.c-runs')
    await cell.hover()
    await tooltip().waitFor()
    assert.equal(await tooltip().getAttribute('data-tip-for'), 'alpha')
    const at = await box(cell)
    await api('POST', `/v1/projects/${p.id}/agents/charlie/start`) // charlie moves to Working, above the idle rows
    await page.locator('tbody[data-group="working"] tr[data-agent="charlie"]').waitFor()
    await tooltip().waitFor({state: 'detached'})
    // Whatever row is under the pointer now, a tooltip shown there is that row's.
    const under = await page.evaluate(([x, y]) => document.elementFromPoint(x, y)?.closest('tr[data-agent]')?.dataset.agent ?? '',
      [at.left + 6, at.top + 6])
    await page.mouse.move(at.left + 5, at.top + 5)
    await page.mouse.move(at.left + 6, at.top + 6)
    if (under) {
      await tooltip().waitFor()
      assert.equal(await tooltip().getAttribute('data-tip-for'), under)
    }
    await page.mouse.move(5, 5)
    await api('POST', `/v1/projects/${p.id}/stop-all`)
  })

  test('at 1024×700 the header keeps clear of the bell with a long status, and the detail keeps the agent’s name', async () => {
    await plain()
    const p = await showNewProject('a-project-with-a-rather-long-name-for-its-header')
    await api('PUT', `/v1/projects/${p.id}/settings`, {dailyBudgetUsd: 0.0002, maxRunning: 1})
    await api('POST', `/v1/projects/${p.id}/agents`, {
      id: 'ratelimit-refactor', name: 'Rate limiter refactor', command: 'claude', args: [...STREAM, '--', 'refactor'],
      profile: 'claude-stream-json', graceSec: 1, env: {FAKE_CLAUDE_MODE: 'error', FAKE_CLAUDE_COST: '0.0003'},
    })
    await api('POST', `/v1/projects/${p.id}/agents`, {id: 'waiter', command: 'sh', args: ['-c', 'exec sleep 600'], graceSec: 1})
    await api('POST', `/v1/projects/${p.id}/agents/ratelimit-refactor/start`)
    await waitStatus('ratelimit-refactor', 'failed')
    await api('POST', `/v1/projects/${p.id}/agents/waiter/start`) // held by the daily budget: queued
    await waitStatus('waiter', 'queued')
    await page.locator('.main-head [data-cost-today]', {hasText: 'daily budget reached · $0.0003 of $0.0002'}).waitFor()
    await row('ratelimit-refactor').locator('.agent-name').click()
    const check = async () => {
      await page.mouse.move(5, 5) // no tooltip in the picture
      const r = await page.evaluate(() => {
        const rect = (el) => el.getBoundingClientRect()
        const $ = (s) => document.querySelector(s)
        const bell = rect($('.main-head .bell'))
        const summary = rect($('.main-head .summary'))
        // Whole and in sight: inside the summary's box (which clips) and left of the bell.
        const whole = (s) => {
          const r = rect($(s))
          return r.right <= Math.min(summary.right, bell.left) + 0.5 && r.left >= summary.left - 0.5
        }
        const name = $('.detail-head .detail-name')
        const detailHead = $('.detail-head')
        return {titleRight: rect($('.main-head .title')).right, bellLeft: bell.left, h1: $('.main-head h1').clientWidth,
          needsYou: whole('.main-head .attn'), held: whole('.main-head .cost-today .held'),
          nameClipped: name.scrollWidth > name.clientWidth, headSideways: detailHead.scrollWidth > detailHead.clientWidth + 1}
      })
      assert.ok(r.titleRight <= r.bellLeft + 0.5, `under the bell: ${JSON.stringify(r)}`)
      assert.ok(r.needsYou && r.held, `"1 needs you" or "daily budget reached" is cut: ${JSON.stringify(r)}`)
      assert.ok(r.h1 >= 70, `the project's name is cut to ${r.h1}px`)
      assert.ok(!r.nameClipped, 'the agent’s name is cut in the detail')
      assert.ok(!r.headSideways, 'the detail head overflows')
    }
    await shots('header-long-status', check)
    await page.setViewportSize(NARROW)
    await check()
    // The name whole on hover.
    await page.locator('.main-head h1').hover()
    await tooltip().getByText('a-project-with-a-rather-long-name-for-its-header').first().waitFor()
    await page.mouse.move(5, 5)
    // A project with a short name keeps its load in the same width.
    const short = await showNewProject('short')
    await api('POST', `/v1/projects/${short.id}/agents`, {id: 'one', command: 'sh', args: ['-c', 'exit 4'], graceSec: 1})
    await api('POST', `/v1/projects/${short.id}/agents/one/start`)
    await page.locator('.main-head [data-attention="1"]').waitFor()
    await page.locator('.main-head [data-load]', {hasText: 'running'}).waitFor()
    const load = await page.locator('.main-head [data-load]').evaluate((el) => ({shown: el.clientWidth, whole: el.scrollWidth}))
    assert.ok(load.shown > 0 && load.shown >= load.whole - 1, `the load is cut or gone with room for it: ${JSON.stringify(load)}`)
    await page.getByRole('button', {name: /^a-project-with-a-rather/}).click()
    await page.setViewportSize(WIDE)
    await api('PUT', `/v1/projects/${p.id}/settings`, {dailyBudgetUsd: 0, maxRunning: 0})
    await api('POST', `/v1/projects/${p.id}/stop-all`)
  })

  test('log search counts "1 / 1" on the first match; the PATH warning does not come and go while typing', async () => {
    await plain()
    const p = await showNewProject('search-and-type')
    await api('POST', `/v1/projects/${p.id}/agents`, {id: 'once', command: 'sh', args: ['-c', 'echo alpha; echo needle here; echo omega'], graceSec: 1})
    await api('POST', `/v1/projects/${p.id}/agents/once/start`)
    await waitStatus('once', 'completed')
    await row('once').locator('.agent-name').click()
    await page.getByRole('log', {name: 'Log'}).getByText('needle here').waitFor()
    const search = page.locator('[data-search="log"]')
    await search.fill('needle')
    await page.locator('.match-count', {hasText: '1 / 1'}).waitFor()
    assert.equal(await page.locator('.match-count').textContent(), '1 / 1')
    await search.fill('')

    await page.getByRole('button', {name: 'New agent'}).click()
    const dialog = page.getByRole('dialog', {name: 'New agent'})
    const cmd = dialog.locator('[name="command"]')
    await cmd.click()
    let seen = 0
    for (const ch of 'claude-x') {
      await cmd.press(ch === '-' ? 'Minus' : ch)
      await sleep(250)
      seen += await dialog.getByText(/is not on the PATH/).count()
    }
    assert.equal(seen, 0, 'the warning showed while typing')
    await dialog.getByText(/is not on the PATH/).waitFor() // once typing rests
    await page.screenshot({path: join(OUT, 'path-warning-1280-light.png')})
    await page.keyboard.press('Escape')
    await dialog.getByRole('alertdialog', {name: 'Discard your changes?'}).getByRole('button', {name: 'Discard'}).click()
    await dialog.waitFor({state: 'detached'})
  })
}
