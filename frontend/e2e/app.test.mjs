// End-to-end: the real window's frontend in Debian's Chromium, against the
// `wails dev` browser server, which calls the real Go bindings and the real
// engine with real processes. scripts/e2e.sh starts `shepherd serve` and then
// wails dev, and runs this with node's test runner; SHEPHERD_E2E_URL,
// SHEPHERD_E2E_OUT, SHEPHERD_BIN (the CLI) come from it, and so do
// XDG_RUNTIME_DIR (where engine.json says how to reach the engine's API, used
// here to prepare many agents fast) and FAKE_CLAUDE_RECORD (what the fake
// Claude CLI was called with; FAKE_CODEX_RECORD the same for the fake Codex).
//
// In order: the window attached to `shepherd serve` (attach.mjs; a host over SSH meanwhile, hosts.mjs), which then
// ends, and the window starts the headless engine; the cockpit against that
// engine (below); pause, the run queue and a stale recovery
// (pause.mjs); the sandbox, a Codex agent, and what runs cost and use (usage.mjs);
// waiting for the user, acknowledge, crash loops and toasts over dialogs (attention.mjs); answering what
// an agent asks (answers.mjs); what a
// newcomer tripped on (newcomer.mjs); and the window by keyboard alone (keyboard.mjs).
import {after, before, test} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {
  api, closeToasts, createAgent, FAKE_RECORD, launch, NARROW, openNewAgent, page, restarts, row, shot, shutdown, sleep,
  status, visibleRows, waitStatus, WIDE,
} from './lib.mjs'
import {attachTests} from './attach.mjs'
import {hostsTests} from './hosts.mjs'
import {pauseTests} from './pause.mjs'
import {usageTests} from './usage.mjs'
import {budgetTests} from './budget.mjs'
import {worktreeTests} from './worktree.mjs'
import {attentionTests} from './attention.mjs'
import {answersTests, usageTests as usageLimitTests} from './answers.mjs'
import {newcomerTests} from './newcomer.mjs'
import {keyboardTests} from './keyboard.mjs'

const project = mkdtempSync(join(tmpdir(), 'shepherd-e2e-project-'))
const many = mkdtempSync(join(tmpdir(), 'shepherd-e2e-many-'))

before(launch)
after(shutdown)

attachTests(hostsTests)

// -------------------------------------------------------------------- tests

test('first launch offers to add a project; a typed path adds it', async () => {
  await page.getByRole('heading', {name: 'Welcome to Shepherd'}).waitFor()
  await page.getByRole('button', {name: 'Add project'}).click()
  const dialog = page.getByRole('dialog', {name: 'Add project'})
  await dialog.locator('[name="path"]').fill(project)
  await dialog.locator('[name="name"]').fill('e2e-project')
  await dialog.getByRole('button', {name: 'Add project'}).click()
  await page.getByRole('heading', {name: 'e2e-project'}).waitFor()
  await page.getByText('No agents in this project yet').waitFor()
})

test('an invalid agent shows the engine’s message inline and is not saved', async () => {
  await page.getByRole('button', {name: 'Create the first agent'}).click()
  const dialog = page.getByRole('dialog', {name: 'New agent'})
  await dialog.locator('[name="id"]').fill('nocmd')
  await dialog.getByRole('button', {name: 'Create agent'}).click()
  await dialog.getByText(/command is empty/).waitFor()
  // Esc with an edit in the form asks first; Esc again keeps editing; Discard closes.
  await page.keyboard.press('Escape')
  const ask = dialog.getByRole('alertdialog', {name: 'Discard your changes?'})
  await ask.waitFor()
  await page.keyboard.press('Escape')
  await ask.waitFor({state: 'detached'})
  assert.equal(await dialog.locator('[name="id"]').inputValue(), 'nocmd')
  await page.mouse.click(5, 695) // outside the dialog
  await ask.getByRole('button', {name: 'Discard'}).click()
  await dialog.waitFor({state: 'detached'})
  assert.equal(await row('nocmd').count(), 0)
})

test('create, start, see the log lines live, stop, see stopped', async () => {
  await createAgent('talker', 'sh', `-c "for i in 1 2 3; do echo line-\\$i; sleep 0.3; done; exec sleep 60"`)
  assert.equal(await status('talker').getAttribute('data-status'), 'not_started')
  await row('talker').getByRole('button', {name: 'Start'}).click()
  await waitStatus('talker', 'running')
  // The detail's log follows the pushed batches; the run is marked.
  await row('talker').locator('.agent-name').click()
  const log = page.getByRole('log', {name: 'Log'})
  await log.getByText('line-1').waitFor()
  await log.getByText('line-3').waitFor()
  await log.locator('.run-marker', {hasText: 'Run 1 · started by you'}).waitFor()
  await row('talker').getByRole('button', {name: 'Stop'}).click()
  await waitStatus('talker', 'stopped')
  await row('talker').getByText('stopped by user').waitFor()
})

test('log search: highlight, count, next and previous, context; Ctrl+F reaches it', async () => {
  await page.getByRole('log', {name: 'Log'}).click()
  await page.keyboard.press('Control+f')
  const box = page.locator('[data-search="log"]')
  assert.equal(await box.evaluate((el) => el === document.activeElement), true)
  await box.fill('line-')
  await page.locator('.match-count', {hasText: '3 / 3'}).waitFor()
  await box.press('Enter')
  await page.locator('.match-count', {hasText: '1 / 3'}).waitFor()
  await box.press('Shift+Enter')
  await page.locator('.match-count', {hasText: '3 / 3'}).waitFor()
  assert.equal(await page.locator('.log-line mark.current').textContent(), 'line-')
  await box.fill('')
})

test('an agent that exits 3 shows failed with the code, in Needs you, and a toast', async () => {
  await createAgent('crasher', 'sh', `-c "echo about to fail; exit 3"`, {start: true})
  await waitStatus('crasher', 'failed')
  await row('crasher').getByText('exit code 3').waitFor()
  await page.locator('section.detail').getByText('Process exited with code 3').waitFor()
  await page.locator('tbody[data-group="attention"] tr[data-agent="crasher"]').waitFor()
  const toast = page.locator('[data-sonner-toast]').filter({hasText: /crasher|failed/i})
  await toast.first().waitFor()
})

test('a keep-alive agent waiting to restart can be stopped from its row', async () => {
  await createAgent('looper', 'sh', `-c "exit 1"`, {keepAlive: true, start: true})
  await row('looper').getByText(/restarting in/).waitFor()
  const stop = row('looper').getByRole('button', {name: 'Stop'})
  assert.equal(await stop.getAttribute('title'), 'Cancel the pending keep-alive restart')
  // Between two tries it may be live for a moment; the Stop is there either way.
  await stop.click()
  await row('looper').getByText(/restarting in/).waitFor({state: 'detached'})
  const n = await restarts('looper')
  await sleep(5000) // longer than the next backoff step
  assert.equal(await restarts('looper'), n, 'the restart was not cancelled')
  assert.equal(await row('looper').getByText(/restarting in/).count(), 0)
  assert.equal(await row('looper').getByRole('button', {name: 'Start'}).count(), 1)
})

test('Stop all asks with the count and stops a restarting keep-alive agent too', async () => {
  await createAgent('sleeper', 'sleep', '300', {start: true})
  await createAgent('looper2', 'sh', `-c "exit 1"`, {keepAlive: true, start: true})
  await waitStatus('sleeper', 'running')
  await row('looper2').getByText(/restarting in/).waitFor()
  await page.getByRole('button', {name: /^Stop all \(2\)/}).click()
  const dialog = page.getByRole('dialog', {name: 'Stop 2 running agents?'})
  await dialog.getByText(/waiting for a keep-alive restart/).waitFor()
  await shot('stop-all-1280-light')
  await dialog.getByRole('button', {name: 'Stop 2'}).click()
  await dialog.waitFor({state: 'detached'})
  await waitStatus('sleeper', 'stopped')
  await row('looper2').getByText(/restarting in/).waitFor({state: 'detached'})
  const n = await restarts('looper2')
  await sleep(5000)
  assert.equal(await restarts('looper2'), n, 'Stop all left a keep-alive restart pending')
  assert.equal(await page.getByRole('button', {name: /^Stop all/}).isDisabled(), true)
})

test('the Claude Code preset with a prompt runs the fixture; runs are marked; a missing command is a warning', async () => {
  let dialog = await openNewAgent()
  await dialog.getByRole('button', {name: 'Claude Code'}).click()
  await dialog.locator('[name="command"]').fill('claude-not-installed')
  await dialog.getByText(/is not on the PATH/).waitFor()
  // A warning, not a refusal; the start error then stays on the row and in the detail.
  await dialog.locator('[name="id"]').fill('missing-cli')
  await dialog.getByRole('button', {name: 'Create and start'}).click()
  await dialog.waitFor({state: 'detached'})
  await page.locator('tbody[data-group="attention"] tr[data-agent="missing-cli"]').waitFor()
  await row('missing-cli').getByText('claude-not-installed not found on PATH').waitFor()
  await row('missing-cli').getByText('could not start').waitFor()
  await page.locator('section.detail .start-error', {hasText: /Failed to start/}).waitFor()

  dialog = await openNewAgent()
  await dialog.getByRole('button', {name: 'Claude Code'}).click()
  await dialog.locator('[name="id"]').fill('claude-fix')
  const prompt = 'Fix the failing tests.\nThen update the docs.'
  await dialog.locator('textarea[name="prompt"]').fill(prompt)
  await dialog.locator('[name="model"]').fill('fake-model')
  await sleep(500)
  assert.equal(await dialog.getByText(/is not on the PATH/).count(), 0, 'claude is on PATH: no warning')
  await dialog.getByRole('button', {name: 'Create and start'}).click()
  await dialog.waitFor({state: 'detached'})
  await waitStatus('claude-fix', 'completed')
  // The detail opened on the new agent: the conversation, with its run marked.
  const conv = page.getByLabel('Conversation')
  await conv.getByText('Fixed the error in main.go').first().waitFor()
  await conv.locator('.run-marker', {hasText: 'Run 1 · started by you'}).waitFor()
  const calls = readFileSync(FAKE_RECORD, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
  // The engine adds its hooks (--settings) for the run, before the `--`.
  const args = calls.at(-1).args
  assert.deepEqual(args.slice(-2), ['--', prompt])
  assert.deepEqual(args.slice(args.indexOf('--model'), args.indexOf('--model') + 2), ['--model', 'fake-model'])
  const settings = JSON.parse(args[args.indexOf('--settings') + 1])
  assert.ok(settings.hooks.PermissionRequest[0].hooks[0].url.endsWith('/v1/hooks/claude'), 'Shepherd\'s hooks are installed')
  // And its permission tool, spoken to with the run's own credential.
  assert.equal(args[args.indexOf('--permission-prompt-tool') + 1], 'mcp__shepherd-answers__approve')
  const mcp = JSON.parse(args[args.indexOf('--mcp-config') + 1]).mcpServers['shepherd-answers']
  assert.ok(mcp.url.endsWith('/v1/mcp/permission') && mcp.headers.Authorization === 'Bearer ${SHEPHERD_AGENT_TOKEN}')

  // Resumed by hand: a second run, marked with its cause and the previous run's end.
  await page.locator('section.detail').getByRole('button', {name: 'Resume'}).click()
  await conv.locator('.run-marker', {hasText: 'Run 2 · resumed by you'}).waitFor({timeout: 20_000})
  await conv.locator('.run-marker', {hasText: 'the run before: completed'}).waitFor()
  await waitStatus('claude-fix', 'completed')
  // Search in the conversation.
  await page.locator('[data-search="log"]').fill('error')
  await page.locator('.match-count', {hasText: /\d+ \/ \d+/}).waitFor()
  assert.ok(await conv.locator('mark').count() >= 2)
  await page.locator('[data-search="log"]').fill('')
})

test('the activity feed keeps failures and recoveries, with an unread count', async () => {
  const bell = page.locator('button.bell')
  await bell.locator('.bell-count').waitFor()
  await bell.click()
  const feed = page.getByRole('complementary', {name: 'Activity'})
  await feed.locator('[data-feed-entry]', {hasText: 'crasher'}).first().waitFor()
  await feed.locator('[data-feed-entry]', {hasText: /restart scheduled/}).first().waitFor()
  await feed.getByRole('tab', {name: /All projects/}).click()
  await shot('feed-1280-light')
  await feed.getByRole('button', {name: 'Close activity'}).click()
  await bell.locator('.bell-count').waitFor({state: 'detached'})
})

test('keys: / filters, ↑/↓ move, Enter opens, Esc closes', async () => {
  await page.locator('section.detail button[aria-label="Close detail"]').click()
  await page.locator('body').click({position: {x: 600, y: 20}})
  await page.keyboard.press('/')
  assert.equal(await page.locator('[data-search="agents"]').evaluate((el) => el === document.activeElement), true)
  await page.keyboard.type('sleeper')
  await page.keyboard.press('Enter') // leaves the box
  await page.keyboard.press('ArrowDown')
  await page.keyboard.press('Enter')
  await page.getByRole('region', {name: 'Agent sleeper'}).waitFor()
  await page.keyboard.press('Escape')
  await page.getByRole('region', {name: 'Agent sleeper'}).waitFor({state: 'detached'})
  await page.locator('[data-search="agents"]').fill('')
})

test('30 agents: all 30 visible at 1280×800; no sideways scrolling at 1024×700; screenshots', async () => {
  const p = await api('POST', '/v1/projects', {path: many, name: 'many-agents'})
  const kinds = [
    ...Array.from({length: 3}, (_, i) => ({id: `broken-${i + 1}`, command: 'sh', args: ['-c', `echo boom; exit ${i + 2}`], start: true})),
    ...Array.from({length: 9}, (_, i) => ({id: `worker-${i + 1}`, name: i % 3 === 0 ? `Refactor module ${i + 1}` : undefined, command: 'sh', args: ['-c', `echo working ${i}; exec sleep 600`], start: true})),
    ...Array.from({length: 10}, (_, i) => ({id: `job-${i + 1}`, command: 'sh', args: ['-c', 'echo done'], start: true})),
    ...Array.from({length: 8}, (_, i) => ({id: `idle-${i + 1}`, command: 'make', args: ['-j4', `target-${i}`], start: false})),
  ]
  for (const k of kinds) {
    await api('POST', `/v1/projects/${p.id}/agents`, {id: k.id, name: k.name, command: k.command, args: k.args, graceSec: 1})
    if (k.start) await api('POST', `/v1/projects/${p.id}/agents/${k.id}/start`)
  }
  await page.getByRole('button', {name: /many-agents/}).click()
  await page.getByRole('heading', {name: 'many-agents'}).waitFor()
  await page.locator('tr[data-agent]').nth(29).waitFor()
  await waitStatus('job-10', 'completed')
  await waitStatus('broken-3', 'failed')
  await closeToasts()

  for (const [size, vp] of [['1280', WIDE], ['1024', NARROW]]) {
    await page.setViewportSize(vp)
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({colorScheme: scheme})
      // The list, with the detail closed.
      const close = page.locator('section.detail button[aria-label="Close detail"]')
      if (await close.count()) await close.click()
      await sleep(200)
      if (size === '1280' && scheme === 'light') {
        const n = await visibleRows()
        assert.equal(n, 30, `only ${n} of 30 agents visible at 1280×800`)
      }
      const sideways = await page.evaluate(() => {
        const wrap = document.querySelector('.list-wrap')
        return {doc: document.documentElement.scrollWidth - window.innerWidth, list: wrap.scrollWidth - wrap.clientWidth,
          tallest: Math.max(...Array.from(document.querySelectorAll('tr[data-agent]')).map((r) => r.getBoundingClientRect().height)),
          offscreen: Array.from(document.querySelectorAll('tr[data-agent] .row-actions button')).filter((b) => b.getBoundingClientRect().right > window.innerWidth).length}
      })
      assert.ok(sideways.doc <= 0 && sideways.list <= 0, `horizontal scrolling at ${size}: ${JSON.stringify(sideways)}`)
      assert.equal(sideways.offscreen, 0, `row actions off-screen at ${size}`)
      assert.ok(sideways.tallest <= 28, `a row wraps at ${size} (${sideways.tallest}px)`)
      await shot(`list-${size}-${scheme}`)

      // The detail below the list, the selected row still in view.
      await row('worker-4').locator('.agent-name').click()
      await page.getByRole('log', {name: 'Log'}).getByText('working 3').waitFor()
      const inView = await page.evaluate(() => {
        const r = document.querySelector('tr[data-agent="worker-4"]').getBoundingClientRect()
        const box = document.querySelector('.list-wrap').getBoundingClientRect()
        return r.top >= box.top && r.bottom <= box.bottom
      })
      assert.ok(inView, `the selected row is hidden by the detail at ${size}`)
      await shot(`detail-${size}-${scheme}`)

      // The feed.
      await page.locator('button.bell').click()
      await page.getByRole('complementary', {name: 'Activity'}).waitFor()
      await shot(`feed-${size}-${scheme}`)
      await page.getByRole('button', {name: 'Close activity'}).click()

      // The project's settings.
      await page.getByRole('button', {name: 'Project settings'}).click()
      await page.getByRole('dialog', {name: /Settings of/}).getByLabel(/Automatic resumes/).waitFor()
      await shot(`settings-${size}-${scheme}`)
      await page.keyboard.press('Escape')
    }
  }
  await page.emulateMedia({colorScheme: 'light'})
  await page.setViewportSize(WIDE)
  // The conversation of a Claude agent, for the record.
  await page.getByRole('button', {name: /e2e-project/}).click()
  await row('claude-fix').locator('.agent-name').click()
  await page.getByLabel('Conversation').locator('.run-marker').first().waitFor()
  await shot('conversation-1280-light')
})

pauseTests()

usageTests()
budgetTests()

worktreeTests()

attentionTests()

answersTests()
usageLimitTests()

newcomerTests()

keyboardTests()
