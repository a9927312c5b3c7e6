// A host over SSH from the window, while it is attached to `shepherd serve`:
// scripts/e2e.sh runs a host for it (shepherd-test-host: an in-process SSH
// server running commands as this user in a home folder of its own) and
// gives serve a home of its own with a key that host lets in, so nothing of
// the user's ~/.ssh is read or written. SHEPHERD_E2E_HOST names the file
// where the host says its address, its key's fingerprint and its home.
import {test} from 'node:test'
import assert from 'node:assert/strict'
import {existsSync, mkdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {api, page, row, shots, sleep, waitStatus} from './lib.mjs'

async function hostInfo() {
  const f = process.env.SHEPHERD_E2E_HOST ?? ''
  for (let i = 0; i < 100 && !existsSync(f); i++) await sleep(100)
  assert.ok(existsSync(f), `the test host wrote no ${f}`)
  return JSON.parse(readFileSync(f, 'utf8'))
}

export function hostsTests() {
  test('a host over SSH: its key shown and accepted, its project and agent in the window as a local one, its state, removed', async () => {
    const host = await hostInfo()
    await page.getByRole('button', {name: 'Add host…'}).click()
    const dialog = page.getByRole('dialog', {name: 'Add host'})
    await dialog.locator('[name="name"]').fill('lab')
    await dialog.locator('[name="url"]').fill(host.url)
    await dialog.getByRole('button', {name: 'Add host'}).click()
    // Never trusted in silence: the key's fingerprint, to compare and accept.
    await dialog.locator('[data-fingerprint]').waitFor()
    assert.equal(await dialog.locator('[data-fingerprint]').textContent(), host.fingerprint)
    await shots('host-key')
    await dialog.getByRole('button', {name: 'Accept key and add'}).click()
    await dialog.waitFor({state: 'detached', timeout: 60_000}) // its engine installed and started there
    const lab = page.locator('.machines [data-host="lab"]')
    await page.locator('.machines [data-host="lab"][data-state="connected"]').waitFor()
    await page.getByRole('heading', {name: 'Projects on lab'}).waitFor()

    // A project there, by a path on that host, from the same dialog as a local one.
    const dir = join(host.home, 'proj')
    mkdirSync(dir, {recursive: true})
    await page.getByRole('button', {name: 'Add project'}).first().click()
    const add = page.getByRole('dialog', {name: 'Add project'})
    await add.locator('[name="path"]').fill(dir)
    await add.locator('[name="name"]').fill('on-lab')
    await add.getByRole('button', {name: 'Add project'}).click()
    await page.getByRole('heading', {name: 'on-lab'}).waitFor()
    const p = (await api('GET', '/v1/hosts/lab/projects')).find((x) => x.name === 'on-lab')
    assert.ok(p, 'the project is on the host')
    assert.equal((await api('GET', '/v1/projects')).some((x) => x.name === 'on-lab'), false, 'the project is not on this computer')

    // An agent there: started from its row, its log in the detail, stopped.
    await api('POST', `/v1/hosts/lab/projects/${p.id}/agents`, {id: 'remote', command: 'sh',
      args: ['-c', 'echo hello from lab; exec sleep 300'], graceSec: 1})
    await row('remote').getByRole('button', {name: 'Start'}).click()
    await waitStatus('remote', 'running')
    await page.locator('.machines [data-host="lab"] .host-counts', {hasText: '1 agent'}).waitFor()
    await row('remote').locator('.agent-name').click()
    await page.locator('section.detail').getByText('hello from lab').first().waitFor()
    await shots('host-agent')
    await row('remote').getByRole('button', {name: 'Stop'}).click()
    await waitStatus('remote', 'stopped')

    // This computer again: its own projects, the host listed with its state.
    await page.locator('.machines button.machine', {hasText: 'This computer'}).click()
    await page.getByRole('heading', {name: 'Projects', exact: true}).waitFor()
    await lab.locator('[data-host-state="connected"]').waitFor()
    await shots('hosts-sidebar')

    // Removed: its engine and agents stay there (scripts/e2e.sh ends them).
    await lab.click()
    await page.getByRole('button', {name: 'Remove host'}).click()
    const rm = page.getByRole('dialog', {name: 'Remove host lab'})
    await rm.getByRole('button', {name: 'Remove host'}).click()
    await rm.waitFor({state: 'detached'})
    await page.locator('.machines').waitFor({state: 'detached'})
    assert.deepEqual(await api('GET', '/v1/hosts'), [])
  })
}
