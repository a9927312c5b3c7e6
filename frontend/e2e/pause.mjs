// Pause and the run queue from the window, and a stale Claude agent's
// automatic recovery made visible (toast, feed, run marker).
import {test} from 'node:test'
import assert from 'node:assert/strict'
import {api, closeToasts, page, row, shot, shots, showNewProject, sleep, status, waitStatus} from './lib.mjs'

const AGENTS = ['nap-1', 'nap-2', 'nap-3']
const header = () => page.locator('.main-head [data-load]')
const banner = () => page.getByRole('status', {name: 'Project paused'})
const statusOf = async (id) => status(id).getAttribute('data-status')

export function pauseTests() {
  let project

  test('pause a project from the window: the banner, its agents paused in Idle; the switcher says paused', async () => {
    project = await showNewProject('pausing')
    for (const id of AGENTS) {
      await api('POST', `/v1/projects/${project.id}/agents`, {id, command: 'sh', args: ['-c', `echo ${id} up; exec sleep 600`], graceSec: 1})
      await api('POST', `/v1/projects/${project.id}/agents/${id}/start`)
    }
    // A Claude agent in the middle of a 4 s tool call: the pause lets it finish first.
    const stream = ['-p', '--verbose', '--output-format', 'stream-json']
    await api('POST', `/v1/projects/${project.id}/agents`, {
      id: 'tooling', command: 'claude', args: [...stream, 'run the tests'], profile: 'claude-stream-json', graceSec: 1,
      resumeArgs: [...stream, '--resume', '{sessionId}', '--', 'continue'],
      env: {FAKE_CLAUDE_MODE: 'tool', FAKE_CLAUDE_TOOL_SECONDS: '4', FAKE_CLAUDE_AFTER_TOOL: 'hang'},
    })
    await api('POST', `/v1/projects/${project.id}/agents/tooling/start`)
    for (const id of [...AGENTS, 'tooling']) await waitStatus(id, 'running')
    await header().getByText('4 running').waitFor()

    await page.getByRole('button', {name: 'Pause…'}).click()
    const dialog = page.getByRole('dialog', {name: 'Pause pausing'})
    await dialog.getByText('4 running agents are paused').waitFor()
    await dialog.getByText(/finishes that call first/).waitFor()
    await dialog.locator('[name="note"]').fill('lunch break')
    await dialog.getByRole('button', {name: 'Pause 4 agents'}).click()
    await dialog.waitFor({state: 'detached'})

    // Progress while the Claude agent finishes its tool call.
    await banner().waitFor()
    await banner().getByText('“lunch break”').waitFor()
    for (const id of AGENTS) await waitStatus(id, 'paused')
    await banner().getByText(/^Pausing 4 agents… 3 paused/).waitFor()
    await shot('pausing-1280-light')
    await waitStatus('tooling', 'paused')
    await banner().getByText(/^Pausing 4 agents/).waitFor({state: 'detached'})
    // The rest of the tests want three generic agents.
    await api('DELETE', `/v1/projects/${project.id}/agents/tooling?force=true`)
    await row('tooling').waitFor({state: 'detached'})
    for (const id of AGENTS) await page.locator(`tbody[data-group="idle"] tr[data-agent="${id}"]`).waitFor()
    await banner().getByText(/^Paused (just now|\d+ s ago)/).waitFor()
    await row('nap-1').getByText('lunch break').waitFor()
    assert.equal(await header().textContent(), 'paused')
    await page.locator('.sidebar .project.selected [data-load]', {hasText: 'paused'}).waitFor()
    assert.equal(await page.getByRole('button', {name: 'Pause…'}).count(), 0, 'no Pause button on a paused project')
    await shots('paused')
  })

  test('a paused project with a limit of 1: unpause runs one, the others queue in order; Cancel and Stop move the queue', async () => {
    // The limit through the settings dialog.
    await page.getByRole('button', {name: 'Project settings'}).click()
    const settings = page.getByRole('dialog', {name: /Settings of/})
    await settings.locator('[name="maxRunning"]').fill('1')
    await settings.getByRole('button', {name: 'Save'}).click()
    await settings.waitFor({state: 'detached'})

    await banner().getByRole('button', {name: 'Unpause'}).click()
    await banner().waitFor({state: 'detached'})
    await header().getByText('1/1 running · 2 queued').waitFor()
    await page.locator('.sidebar .project.selected [data-load]', {hasText: '1/1 running · 2 queued'}).waitFor()
    // One runs; the other two say their places (positions settle as the queue moves).
    await page.waitForFunction(() => {
      const labels = Array.from(document.querySelectorAll('tr[data-agent] .status-label')).map((l) => l.textContent).sort()
      return labels.join('|') === 'queued · 1st|queued · 2nd|running'
    }).catch(async (err) => {
      const labels = await page.locator('tr[data-agent] .status-label').allTextContents()
      const recs = await api('GET', `/v1/projects/${project.id}/agents`)
      throw new Error(`${err.message}\nshown: ${labels}\nengine: ${JSON.stringify(recs.map((r) => [r.id, r.status, r.queuePosition]))}`)
    })
    const by = {}
    for (const id of AGENTS) {
      const st = await statusOf(id)
      by[st] = [...(by[st] ?? []), id]
    }
    assert.equal(by.running?.length, 1, JSON.stringify(by))
    for (const id of by.queued) await page.locator(`tbody[data-group="working"] tr[data-agent="${id}"]`).waitFor()
    const place = async (id) => row(id).locator('.status-label').textContent()
    const [first, second] = (await place(by.queued[0])) === 'queued · 1st' ? by.queued : [...by.queued].reverse()
    await row(first).getByText('to resume').waitFor()
    await shots('queued')

    // Cancel takes the 2nd out of the queue, back to paused.
    await row(second).getByRole('button', {name: 'Cancel'}).click()
    await waitStatus(second, 'paused')
    await header().getByText('1/1 running · 1 queued').waitFor()
    // Stopping the running one frees the slot: the 1st in the queue runs, resumed after its pause.
    await row(by.running[0]).getByRole('button', {name: 'Stop'}).click()
    await waitStatus(by.running[0], 'stopped')
    await waitStatus(first, 'running')
    await row(first).locator('.agent-name').click()
    await page.getByRole('log', {name: 'Log'}).locator('.run-marker', {hasText: 'Run 2 · resumed after a pause'}).waitFor()
    await page.locator('section.detail button[aria-label="Close detail"]').click()
    // Per agent: pause from the row's menu, resume from its row.
    await row(first).getByRole('button', {name: `More actions for ${first}`}).click()
    await page.getByRole('menuitem', {name: 'Pause'}).click()
    await waitStatus(first, 'paused')
    await row(first).getByRole('button', {name: 'Resume'}).click()
    await waitStatus(first, 'running')
    await api('PUT', `/v1/projects/${project.id}/settings`, {maxRunning: 0})
    await api('POST', `/v1/projects/${project.id}/stop-all`)
    await closeToasts()
  })

  test('a stale Claude agent is resumed by itself: a toast, a feed entry, and "Run 2 · auto-resumed" in its log', async () => {
    const p = await showNewProject('stale')
    await api('PUT', `/v1/projects/${p.id}/settings`, {staleCheckIntervalSec: 1, staleThresholdSec: 2})
    const stream = ['-p', '--verbose', '--output-format', 'stream-json']
    await api('POST', `/v1/projects/${p.id}/agents`, {
      id: 'hang', command: 'claude', args: [...stream, 'fix it'], profile: 'claude-stream-json', graceSec: 1,
      resumeArgs: [...stream, '--resume', '{sessionId}', '--', 'continue'],
      env: {FAKE_CLAUDE_MODE: 'silent', FAKE_CLAUDE_RESUME_MODE: 'success'},
    })
    await closeToasts()
    await page.getByRole('button', {name: 'Create the first agent'}).waitFor({state: 'detached'}).catch(() => {})
    await row('hang').waitFor()
    await row('hang').getByRole('button', {name: 'Start'}).click()
    await row('hang').locator('.agent-name').click()
    const started = Date.now()
    await page.locator('[data-sonner-toast]', {hasText: 'Agent resumed'}).first().waitFor({timeout: 20_000})
    const conv = page.getByLabel('Conversation')
    await conv.locator('.run-marker', {hasText: /Run 2 · auto-resumed/}).waitFor({timeout: 20_000})
    const took = Date.now() - started
    await waitStatus('hang', 'completed')
    const marker = await conv.locator('.run-marker', {hasText: /Run 2 · auto-resumed/}).textContent()
    assert.match(marker, /after [23] s silent/) // how long it was silent, as the engine measured it (past the 2 s threshold)
    await page.locator('button.bell').click()
    const feed = page.getByRole('complementary', {name: 'Activity'})
    await feed.locator('[data-feed-entry]', {hasText: 'auto-resumed'}).first().waitFor()
    await sleep(100)
    await shots('stale-recovered')
    await feed.getByRole('button', {name: 'Close activity'}).click()
    assert.ok(took < 20_000, `recovered after ${took} ms`)
  })
}
