// The window attached to a running `shepherd serve` (e2e.sh starts it before
// wails dev, with the same XDG folders): the window is a client of that
// engine, and the CLI sees what the window did. Then serve ends; the window
// says its engine went away (once) and starts another (the headless engine),
// against which the rest of the tests run; its first screen says what
// happened while no engine watched (an agent re-attached, one that exited
// with its code).
import {test} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {api, cli, createAgent, engine, page, row, shots, sleep, waitStatus} from './lib.mjs'

const served = mkdtempSync(join(tmpdir(), 'shepherd-e2e-served-'))
const indicator = () => page.locator('[data-engine]').first()

/** The agent as `shepherd ls served --json` lists it. */
function listed(id) {
  const out = JSON.parse(cli('ls', 'served', '--json'))
  const list = Array.isArray(out) ? out : out.agents ?? []
  return list.find((a) => a.id === id)
}

/** The attach tests; between() registers tests that run while the window is still attached to serve. */
export function attachTests(between = () => {}) {
  test('the window attaches to a running `shepherd serve` and says so', async () => {
    const serve = engine()
    assert.ok(serve, 'serve wrote no engine.json')
    await page.getByRole('heading', {name: 'Welcome to Shepherd'}).waitFor()
    await page.locator('[data-engine="attached"]').waitFor()
    assert.equal(await indicator().locator('.engine-text').textContent(), 'Attached to an engine')
    assert.equal(await indicator().locator('.engine-url').textContent(), `pid ${serve.pid} · ${serve.url}`)
  })

  test('through the attached window: add a project, create, start and stop an agent; the CLI sees the same', async () => {
    await page.getByRole('button', {name: 'Add project'}).click()
    const dialog = page.getByRole('dialog', {name: 'Add project'})
    await dialog.locator('[name="path"]').fill(served)
    await dialog.locator('[name="name"]').fill('served')
    await dialog.getByRole('button', {name: 'Add project'}).click()
    await page.getByRole('heading', {name: 'served'}).waitFor()

    await createAgent('via-serve', 'sh', `-c "echo hello from serve; exec sleep 300"`)
    assert.equal(listed('via-serve')?.status, 'not_started')
    await row('via-serve').getByRole('button', {name: 'Start'}).click()
    await waitStatus('via-serve', 'running')
    const rec = listed('via-serve')
    assert.equal(rec?.status, 'running')
    assert.ok(rec.pid > 0, 'the CLI sees its pid')
    // The sidebar's foot says which engine: attached, with its API's address.
    const serve = engine()
    await page.locator('.sidebar [data-engine="attached"]').waitFor()
    assert.equal(await page.locator('.sidebar .engine-url').textContent(), `pid ${serve.pid} · ${serve.url}`)
    await shots('engine-attached')
    await row('via-serve').getByRole('button', {name: 'Stop'}).click()
    await waitStatus('via-serve', 'stopped')
    assert.equal(listed('via-serve')?.status, 'stopped')
  })

  between()

  test('serve ends: the window says its engine went away and starts another', async () => {
    const serve = engine()
    // Two agents run on when serve ends: one is still running when the next engine starts, one exits before.
    const served = (await api('GET', '/v1/projects')).find((p) => p.name === 'served')
    const run = async (id, script) => {
      await api('POST', `/v1/projects/${served.id}/agents`, {id, command: 'sh', args: ['-c', script], graceSec: 1})
      await api('POST', `/v1/projects/${served.id}/agents/${id}/start`)
      await waitStatus(id, 'running')
    }
    await run('survivor', 'echo still here; exec sleep 300')
    await run('brief', 'sleep 2; exit 4')
    // SIGTERM, not `shepherd quit`: that would close the window too.
    process.kill(serve.pid, 'SIGTERM')
    const banner = page.getByRole('alert').filter({hasText: 'The engine this window was attached to went away'})
    await banner.waitFor()
    await page.locator('.sidebar [data-engine="lost"]').waitFor()
    await shots('engine-lost')
    // The message is said once: by the banner, not again by the sidebar or the list.
    assert.equal((await page.locator('body').textContent()).match(/went away/g)?.length, 1)
    await sleep(2500) // brief ends while no engine watches
    await banner.getByRole('button', {name: 'Start an engine here'}).click()
    await banner.waitFor({state: 'detached'})
    // What happened while closed: one summary, on the first screen.
    const summary = page.getByRole('dialog', {name: 'While Shepherd was closed'})
    await summary.waitFor()
    await summary.locator('[data-outcome="reattached"]', {hasText: 'survivor'}).getByText('still running — re-attached').waitFor()
    await summary.locator('[data-outcome="exited_while_closed"]', {hasText: 'brief'}).getByText('exited — exit code 4').waitFor()
    await shots('while-closed')
    await summary.getByRole('button', {name: 'OK'}).click()
    await summary.waitFor({state: 'detached'})
    await api('POST', `/v1/projects/${served.id}/stop-all`)
    await waitStatus('survivor', 'stopped')
    // The window started the headless engine (SHEPHERD_ENGINE) and is its client.
    await page.locator('.sidebar [data-engine="attached"]').waitFor()
    const own = engine()
    assert.ok(own && own.pid !== serve.pid, 'engine.json names the engine the window started')
    assert.equal(await page.locator('.sidebar .engine-url').textContent(), `pid ${own.pid} · ${own.url}`)
    // Everything was fetched again from the new engine: the project and its agent are there.
    await waitStatus('via-serve', 'stopped')
    assert.equal(listed('via-serve')?.status, 'stopped')
    // The cockpit's tests start from a first launch: forget this project.
    await page.getByRole('button', {name: 'Remove', exact: true}).click()
    await page.getByRole('dialog', {name: 'Remove project'}).getByRole('button', {name: 'Remove'}).click()
    await page.getByRole('heading', {name: 'Welcome to Shepherd'}).waitFor()
  })
}
