// The sandbox from the window (an agent with a folder to write to and the
// network: its lock, its grants in the detail, the edit form that reads them
// back), a Codex agent from the preset against the fake codex, and what runs
// cost and use: the cost column and today's cost once a Claude agent reports
// one, CPU and memory for running agents, the detail's Usage tab.
import {test} from 'node:test'
import assert from 'node:assert/strict'
import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {api, closeToasts, FAKE_CODEX_RECORD, openNewAgent, page, row, shot, shots, showNewProject, sleep, waitStatus} from './lib.mjs'

const detail = () => page.locator('section.detail')

export function usageTests() {
  let project
  const out = mkdtempSync(join(tmpdir(), 'shepherd-e2e-out-'))

  test('sandbox: a sandboxed agent with a folder and the network; its lock, its grants in the detail, read back by Edit', async () => {
    project = await showNewProject('sandbox')
    const dialog = await openNewAgent()
    await dialog.locator('[name="id"]').fill('boxed')
    await dialog.locator('[name="command"]').fill('sh')
    await dialog.locator('[name="args"]').fill(`-c "echo sandboxed; touch ${out}/made-here; exec sleep 600"`)
    await dialog.locator('[name="graceSec"]').fill('1')
    await dialog.getByLabel('Run sandboxed').check()
    await dialog.getByText(/may read any file, but it has no network/).waitFor()
    await dialog.getByLabel(/^Network/).check()
    // A folder that does not exist: the engine's message names the tag, at the section; nothing is lost.
    await dialog.getByLabel('Add a folder it may write to').fill('/no/such/folder')
    await dialog.getByRole('button', {name: 'Create agent'}).click()
    await dialog.locator('fieldset.sandbox').getByText(/invalid permission "@write:\/no\/such\/folder"/).waitFor()
    assert.equal(await dialog.locator('[name="id"]').inputValue(), 'boxed')
    await dialog.getByRole('button', {name: 'Remove /no/such/folder'}).click()
    await dialog.getByLabel('Add a folder it may write to').fill(out)
    await dialog.getByLabel('Add a folder it may write to').press('Enter')
    await dialog.getByRole('list', {name: 'Folders it may write to'}).getByText(out).waitFor()
    await shots('sandbox-form', async () => {
      await dialog.locator('fieldset.sandbox').scrollIntoViewIfNeeded()
    })
    await dialog.getByRole('button', {name: 'Create agent'}).click()
    await dialog.waitFor({state: 'detached'})

    const lock = row('boxed').locator('[data-sandboxed]')
    await lock.waitFor()
    assert.equal(await lock.getAttribute('title'), `Sandboxed: reads any file\nNetwork: allowed\nWrites: its log, and in ${out} (and below)`)
    const rec = await api('GET', `/v1/projects/${project.id}/agents/boxed`)
    assert.deepEqual(rec.sandbox, {network: true, writeDirs: [out], permissions: ['@network', `@write:${out}`]})

    // Started: it runs where the machine can enforce it; where it cannot, the start error says what is missing.
    const {sandbox: support} = await api('GET', '/v1/engine')
    const enforceable = support.os === 'darwin' ? support.seatbelt : support.landlock
    await row('boxed').getByRole('button', {name: 'Start'}).click()
    if (enforceable) {
      await waitStatus('boxed', 'running')
      for (let i = 0; i < 50 && !existsSync(join(out, 'made-here')); i++) await sleep(100)
      assert.ok(existsSync(join(out, 'made-here')), 'the sandboxed agent could not write in its granted folder')
    } else {
      await row('boxed').getByText(/sandbox unavailable/).waitFor()
      await detail().locator('.start-error', {hasText: /this machine lacks Landlock/}).waitFor()
    }
    await row('boxed').locator('.agent-name').click()
    await detail().locator('.sandboxed').waitFor()
    await detail().getByRole('tab', {name: 'Record'}).click()
    const grants = detail().locator('[data-grants]')
    await grants.getByText('Network: allowed.').waitFor()
    assert.match(await grants.textContent(), new RegExp(`Writes: its own log, and in ${out} and below`))
    await shots('sandbox')

    if (enforceable) await row('boxed').getByRole('button', {name: 'Stop'}).click()
    await waitStatus('boxed', enforceable ? 'stopped' : 'not_started')
    await row('boxed').getByRole('button', {name: 'More actions for boxed'}).click()
    await page.getByRole('menuitem', {name: 'Edit'}).click()
    const edit = page.getByRole('dialog', {name: 'Edit boxed'})
    assert.equal(await edit.getByLabel('Run sandboxed').isChecked(), true)
    assert.equal(await edit.getByLabel(/^Network/).isChecked(), true)
    await edit.getByRole('list', {name: 'Folders it may write to'}).getByText(out).waitFor()
    await page.keyboard.press('Escape')
    await edit.waitFor({state: 'detached'})
    await detail().getByRole('button', {name: 'Close detail'}).click()
  })

  test('a Codex agent from the preset runs the fake codex; no cost column while nothing reports a cost', async () => {
    const dialog = await openNewAgent()
    // Claude Code's preset offers Shepherd's tools; Codex's does not.
    await dialog.getByRole('button', {name: 'Claude Code'}).click()
    await dialog.getByLabel(/Give it Shepherd’s tools \(MCP\)/).check()
    await dialog.getByText(/run and watch its own dev servers/).waitFor()
    await shot('claude-mcp-form-1280-light')
    await dialog.getByRole('button', {name: 'Codex'}).click()
    assert.equal(await dialog.getByLabel(/Give it Shepherd’s tools/).count(), 0)
    assert.equal(await dialog.locator('[name="command"]').inputValue(), 'codex')
    assert.equal(await dialog.locator('[name="profile"]').inputValue(), 'codex-json')
    await dialog.locator('[name="id"]').fill('codex-fix')
    const prompt = 'Fix the failing build.'
    await dialog.locator('textarea[name="prompt"]').fill(prompt)
    await dialog.locator('[name="model"]').fill('fake-model')
    await sleep(500)
    assert.equal(await dialog.getByText(/is not on the PATH/).count(), 0, 'codex is on PATH: no warning')
    await shots('codex-form')
    await dialog.getByRole('button', {name: 'Create and start'}).click()
    await dialog.waitFor({state: 'detached'})
    await waitStatus('codex-fix', 'completed')
    const calls = readFileSync(FAKE_CODEX_RECORD, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    assert.deepEqual(calls.at(-1).args, ['exec', '--json', '-m', 'fake-model', prompt])
    const rec = await api('GET', `/v1/projects/${project.id}/agents/codex-fix`)
    assert.deepEqual(rec.resumeArgs, ['exec', '--json', '-m', 'fake-model', 'resume', '{sessionId}', 'continue'])
    // Its figures (tokens, no cost) in the detail's strip.
    await detail().locator('.usage-strip', {hasText: /Latest run.*1k in, 800 cached, 50 out tokens/}).waitFor()
    assert.equal(await page.locator('table.agents th.c-cost').count(), 0, 'no agent reported a cost')
    assert.equal(await page.locator('[data-summary] .cost-today').count(), 0)
  })

  test('cost once a Claude agent reports one; CPU and memory for running agents; the Usage tab charts them', async () => {
    const stream = ['-p', '--verbose', '--output-format', 'stream-json']
    await api('POST', `/v1/projects/${project.id}/agents`, {id: 'claude-cost', command: 'claude', args: [...stream, '--', 'fix it'],
      profile: 'claude-stream-json', resumeArgs: [...stream, '--resume', '{sessionId}', '--', 'continue'], graceSec: 1})
    await api('POST', `/v1/projects/${project.id}/agents/claude-cost/start`)
    // Two running agents: one that works in bursts, one that holds some memory.
    await api('POST', `/v1/projects/${project.id}/agents`, {id: 'busy-loop', command: 'sh', graceSec: 1,
      args: ['-c', 'while :; do i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done; sleep 0.2; done']})
    await api('POST', `/v1/projects/${project.id}/agents/busy-loop/start`)
    await api('POST', `/v1/projects/${project.id}/agents`, {id: 'holder', command: 'sh', graceSec: 1,
      args: ['-c', 'x=$(head -c 30000000 /dev/zero | tr "\\0" a); sleep 600']})
    await api('POST', `/v1/projects/${project.id}/agents/holder/start`)
    await waitStatus('claude-cost', 'completed')
    await row('claude-cost').locator('td.c-cost', {hasText: '$0.0123'}).waitFor() // the precision it needs
    await page.locator('[data-summary] .cost-today', {hasText: '$0.0123 today'}).waitFor()
    // The first sample gives memory, the second (2 s later) CPU.
    await row('busy-loop').locator('td.c-cpu', {hasText: /%/}).waitFor({timeout: 20_000})
    await row('holder').locator('td.c-mem', {hasText: /\d+[KMG]/}).waitFor()
    assert.equal((await row('claude-cost').locator('td.c-cpu').textContent()).trim(), '', 'CPU is blank for an agent not running')
    assert.equal(await row('codex-fix').locator('td.c-cost').textContent(), '—')

    await row('busy-loop').locator('.agent-name').click()
    await detail().locator('.usage-now').waitFor()
    await detail().getByRole('tab', {name: 'Usage'}).click()
    await detail().getByRole('img', {name: 'CPU over the last minutes'}).waitFor()
    await sleep(4500) // a few more samples for the chart
    await closeToasts()
    await shots('usage', async () => {
      const sideways = await page.evaluate(() => {
        const wrap = document.querySelector('.list-wrap')
        return wrap.scrollWidth - wrap.clientWidth + Math.max(0, document.documentElement.scrollWidth - window.innerWidth)
      })
      assert.ok(sideways <= 0, `horizontal scrolling with the cost, CPU and memory columns (${sideways}px)`)
      const tallest = await page.evaluate(() => Math.max(...Array.from(document.querySelectorAll('tr[data-agent]')).map((r) => r.getBoundingClientRect().height)))
      assert.ok(tallest <= 28, `a row wraps (${tallest}px)`)
    })
    await detail().getByRole('tab', {name: 'Log'}).click()
    await row('claude-cost').locator('.agent-name').click()
    await shots('costs')
    for (const id of ['busy-loop', 'holder']) await api('POST', `/v1/projects/${project.id}/agents/${id}/stop`, {graceSec: 1})

    // The settings say what of the sandbox this machine enforces.
    await page.getByRole('button', {name: 'Project settings'}).click()
    const line = page.getByRole('dialog', {name: /Settings of/}).locator('[data-sandbox-support]')
    assert.match(await line.textContent(), /Sandbox on this machine: (Landlock|no Landlock|sandbox-exec|no sandbox)/)
    await shots('settings-sandbox', () => line.scrollIntoViewIfNeeded())
    await page.keyboard.press('Escape')
  })
}
