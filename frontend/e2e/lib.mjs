// Shared by the end-to-end tests: the browser and its page (live bindings,
// set by launch()), the engine's API through engine.json, the CLI, and the
// helpers that drive and photograph the window.
import assert from 'node:assert/strict'
import {execFileSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {chromium} from 'playwright-core'

export const URL = process.env.SHEPHERD_E2E_URL ?? 'http://localhost:34115'
export const OUT = process.env.SHEPHERD_E2E_OUT ?? join(tmpdir(), 'shepherd-e2e')
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium'
export const FAKE_RECORD = process.env.FAKE_CLAUDE_RECORD ?? ''
export const FAKE_CODEX_RECORD = process.env.FAKE_CODEX_RECORD ?? ''
/** The shepherd binary (the CLI), built by e2e.sh; the same XDG folders as the window. */
export const SHEPHERD = process.env.SHEPHERD_BIN ?? ''

export const WIDE = {width: 1280, height: 800}
export const NARROW = {width: 1024, height: 700}

export let browser
export let page

export async function launch() {
  mkdirSync(OUT, {recursive: true})
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-quic'],
  })
  page = await browser.newPage({viewport: WIDE})
  page.setDefaultTimeout(15_000)
  page.on('pageerror', (err) => console.error('page error:', err.message))
  // Errors, and warnings such as a pushed event dropped as malformed.
  page.on('console', (m) => ['error', 'warning'].includes(m.type()) && console.error(`console ${m.type()}:`, m.text()))
  await page.goto(URL)
}

export async function shutdown() {
  if (page) await page.screenshot({path: join(OUT, 'e2e-last.png')}).catch(() => {})
  // Agents outlive the app by design: stop what the tests left running.
  const e = engine()
  if (e) {
    const projects = await api('GET', '/v1/projects').catch(() => [])
    for (const p of projects ?? []) await api('POST', `/v1/projects/${p.id}/stop-all`).catch(() => {})
  }
  await browser?.close()
}

/** The CLI, with the tests' environment (the same XDG folders): its stdout. */
export function cli(...args) {
  assert.ok(SHEPHERD, 'SHEPHERD_BIN is not set')
  return execFileSync(SHEPHERD, args, {encoding: 'utf8', timeout: 20_000})
}

/** The engine's API, as engine.json tells (the same engine the window embeds). */
export function engine() {
  const f = join(process.env.XDG_RUNTIME_DIR ?? '', 'shepherd', 'engine.json')
  return existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')) : null
}

export async function api(method, path, body) {
  const e = engine()
  assert.ok(e, 'engine.json not found')
  const res = await fetch(e.url + path, {
    method, headers: {Authorization: `Bearer ${e.token}`, 'Content-Type': 'application/json'},
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return text ? JSON.parse(text) : null
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
export const row = (id) => page.locator(`tr[data-agent="${id}"]`)
export const status = (id) => row(id).locator('[data-status]')
export const waitStatus = (id, s) => page.locator(`tr[data-agent="${id}"] [data-status="${s}"]`).waitFor()
export const runsTitle = async (id) => (await row(id).locator('td.c-runs').getAttribute('title')) ?? ''
export const restarts = async (id) => Number(/(\d+) keep-alive restart/.exec(await runsTitle(id))?.[1] ?? NaN)

export async function openNewAgent() {
  await page.getByRole('button', {name: /^New agent$|Create the first agent/}).first().click()
  return page.getByRole('dialog', {name: 'New agent'})
}

export async function createAgent(id, command, args, {grace = '1', keepAlive = false, start = false} = {}) {
  const dialog = await openNewAgent()
  await dialog.locator('[name="id"]').fill(id)
  await dialog.locator('[name="command"]').fill(command)
  await dialog.locator('[name="args"]').fill(args)
  await dialog.locator('[name="graceSec"]').fill(grace)
  if (keepAlive) await dialog.getByLabel(/Keep alive/).check()
  await dialog.getByRole('button', {name: start ? 'Create and start' : 'Create agent'}).click()
  await dialog.waitFor({state: 'detached'})
  await assert.doesNotReject(status(id).waitFor())
}

/** Toasts fade by themselves; screenshots want them gone now. (A DOM click on
 * each close button: a pointer click could land on a dialog's backdrop.) */
export async function closeToasts() {
  for (let i = 0; i < 10; i++) {
    const n = await page.evaluate(() => {
      const buttons = document.querySelectorAll('[data-sonner-toast] [data-close-button]')
      buttons.forEach((b) => b.click())
      return buttons.length
    })
    if (!n) return
    await sleep(300)
  }
}

export async function shot(name) {
  await closeToasts()
  await sleep(250) // let transitions settle
  await page.screenshot({path: join(OUT, `${name}.png`)})
}

/** Rows whose whole line is inside the list's visible box. */
export async function visibleRows() {
  return page.evaluate(() => {
    const box = document.querySelector('.list-wrap').getBoundingClientRect()
    return Array.from(document.querySelectorAll('tr[data-agent]')).filter((r) => {
      const b = r.getBoundingClientRect()
      return b.top >= box.top - 1 && b.bottom <= box.bottom + 1 && b.bottom <= window.innerHeight
    }).length
  })
}

/** Screenshots at both sizes, light and dark (back to 1280 light after). */
export async function shots(name, prepare = async () => {}) {
  for (const [size, vp] of [['1280', WIDE], ['1024', NARROW]]) {
    await page.setViewportSize(vp)
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({colorScheme: scheme})
      await prepare()
      await shot(`${name}-${size}-${scheme}`)
    }
  }
  await page.emulateMedia({colorScheme: 'light'})
  await page.setViewportSize(WIDE)
}

/** Adds a project through the window's Add project dialog (a typed path); it is then shown. Returns the project. */
export async function showNewProject(name) {
  const dir = mkdtempSync(join(tmpdir(), `shepherd-e2e-${name}-`))
  await page.getByRole('button', {name: 'Add project'}).first().click() // the sidebar's +, or the first launch's
  const dialog = page.getByRole('dialog', {name: 'Add project'})
  await dialog.locator('[name="path"]').fill(dir)
  await dialog.locator('[name="name"]').fill(name)
  await dialog.getByRole('button', {name: 'Add project'}).click()
  await page.getByRole('heading', {name}).waitFor()
  const projects = await api('GET', '/v1/projects')
  return projects.find((p) => p.name === name)
}
