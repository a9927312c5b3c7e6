// End-to-end: the real window's frontend in Debian's Chromium, against the
// `wails dev` browser server, which calls the real Go bindings and the real
// engine with real processes. scripts/e2e.sh starts wails dev and runs this
// with node's test runner; SHEPHERD_E2E_URL and SHEPHERD_E2E_OUT come from it.
import {after, before, test} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, mkdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {chromium} from 'playwright-core'

const URL = process.env.SHEPHERD_E2E_URL ?? 'http://localhost:34115'
const OUT = process.env.SHEPHERD_E2E_OUT ?? join(tmpdir(), 'shepherd-e2e')
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium'

let browser
let page
const project = mkdtempSync(join(tmpdir(), 'shepherd-e2e-project-'))

before(async () => {
  mkdirSync(OUT, {recursive: true})
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-quic'],
  })
  page = await browser.newPage({viewport: {width: 1280, height: 860}})
  page.setDefaultTimeout(15_000)
  page.on('pageerror', (err) => console.error('page error:', err.message))
  await page.goto(URL)
})

after(async () => {
  if (page) {
    await page.screenshot({path: join(OUT, 'e2e-last.png')}).catch(() => {})
    // Agents outlive the app by design: stop what a failed test left running.
    const stopAll = page.getByRole('button', {name: /^Stop all/})
    if (await stopAll.isEnabled().catch(() => false)) await stopAll.click().catch(() => {})
  }
  await browser?.close()
})

const row = (id) => page.locator(`tr[data-agent="${id}"]`)
const status = (id) => row(id).locator('[data-status]')

async function createAgent(id, command, args, grace = '1') {
  await page.getByRole('button', {name: /New agent|Create the first agent/}).first().click()
  const dialog = page.getByRole('dialog', {name: 'New agent'})
  await dialog.locator('[name="id"]').fill(id)
  await dialog.locator('[name="command"]').fill(command)
  await dialog.locator('[name="args"]').fill(args)
  await dialog.locator('[name="graceSec"]').fill(grace)
  await dialog.getByRole('button', {name: 'Create agent'}).click()
  await dialog.waitFor({state: 'detached'})
  await assert.doesNotReject(status(id).waitFor())
}

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
  await page.keyboard.press('Escape')
  await dialog.waitFor({state: 'detached'})
  assert.equal(await row('nocmd').count(), 0)
})

test('create, start, see the log lines live, stop, see stopped', async () => {
  await createAgent('talker', 'sh', `-c "for i in 1 2 3; do echo line-\\$i; sleep 0.3; done; exec sleep 60"`)
  assert.equal(await status('talker').getAttribute('data-status'), 'not_started')
  await row('talker').getByRole('button', {name: 'Start'}).click()
  await page.locator('tr[data-agent="talker"] [data-status="running"]').waitFor()
  // The detail's log follows the pushed batches.
  await row('talker').locator('.agent-name').click()
  const log = page.getByRole('log', {name: 'Log'})
  await log.getByText('line-1').waitFor()
  await log.getByText('line-3').waitFor()
  await row('talker').getByRole('button', {name: 'Stop'}).click()
  await page.locator('tr[data-agent="talker"] [data-status="stopped"]').waitFor()
  await row('talker').getByText('stopped by user').waitFor()
  await page.screenshot({path: join(OUT, 'e2e-stopped.png')})
})

test('an agent that exits 3 shows failed with the code, and a toast', async () => {
  await createAgent('crasher', 'sh', `-c "echo about to fail; exit 3"`)
  await row('crasher').getByRole('button', {name: 'Start'}).click()
  await page.locator('tr[data-agent="crasher"] [data-status="failed"]').waitFor()
  await row('crasher').getByText('Process exited with code 3').waitFor()
  assert.equal((await row('crasher').locator('td').nth(6).textContent())?.trim(), '3')
  const toast = page.locator('[data-sonner-toast]').filter({hasText: /crasher|failed/i})
  await toast.first().waitFor()
  await page.screenshot({path: join(OUT, 'e2e-failed.png')})
})
