// Attention from the window: a Claude agent waiting for a permission (the
// fake Claude posts the PermissionRequest and Notification hooks through the
// --settings the engine gives it) is in Needs you at once and can be
// acknowledged; a rate limit is calm; a keep-alive agent that keeps crashing
// is a crash loop with its next try; a toast never covers a dialog's buttons.
import {test} from 'node:test'
import assert from 'node:assert/strict'
import {join} from 'node:path'
import {api, closeToasts, NARROW, OUT, page, row, shots, showNewProject, sleep, waitStatus, WIDE} from './lib.mjs'

const STREAM = ['-p', '--verbose', '--output-format', 'stream-json']
const inGroup = (group, id) => page.locator(`tbody[data-group="${group}"] tr[data-agent="${id}"]`)

export function attentionTests() {
  let project

  test('an agent waiting for a permission is in Needs you; A acknowledges it; a rate limit is calm', async () => {
    project = await showNewProject('attention')
    const claude = (id, env) => api('POST', `/v1/projects/${project.id}/agents`, {
      id, command: 'claude', args: [...STREAM, 'clean the build'], profile: 'claude-stream-json', graceSec: 1,
      resumeArgs: [...STREAM, '--resume', '{sessionId}', '--', 'continue'], env,
    })
    await claude('ask', {FAKE_CLAUDE_MODE: 'permission'})
    // The rate-limited one writes its api_retry line a second after it starts: the engine watches a log for
    // changes only from after the spawn, so what a run writes at once is read on its next write (an engine
    // issue, reported), and this one writes nothing more for 10 minutes.
    await api('POST', `/v1/projects/${project.id}/agents`, {
      id: 'limited', command: 'sh', args: ['-c', `sleep 1; exec claude ${STREAM.join(' ')} 'clean the build'`],
      profile: 'claude-stream-json', graceSec: 1, env: {FAKE_CLAUDE_MODE: 'rate-limit', FAKE_CLAUDE_TOOL_SECONDS: '600'},
    })
    await api('POST', `/v1/projects/${project.id}/agents`, {id: 'dev', command: 'sh', args: ['-c', 'echo serving; exec sleep 600'], graceSec: 1})
    await row('ask').waitFor()
    await api('POST', `/v1/projects/${project.id}/agents/limited/start`)
    await api('POST', `/v1/projects/${project.id}/agents/dev/start`)

    // From the start of the run (its hooks come once it has written its tool call) to the row in Needs you.
    await api('POST', `/v1/projects/${project.id}/agents/ask/start`)
    await waitStatus('ask', 'running')
    const running = Date.now()
    await inGroup('attention', 'ask').locator('[data-waiting="you"]', {hasText: 'waiting: permission for Bash'}).waitFor({timeout: 10_000})
    const took = Date.now() - running
    // A figure for the log, not a bound: how fast is measured by bench/attention, not under a loaded browser.
    console.log(`waiting for a permission: in Needs you ${took} ms after the row read running`)
    await inGroup('working', 'limited').locator('[data-waiting="calm"]', {hasText: /waiting: rate limit/}).waitFor()
    await page.locator('.sidebar .project.selected [data-attention="1"]').waitFor()
    await page.locator('[data-summary] [data-attention="1"]').waitFor()

    await row('ask').locator('.agent-name').click()
    const line = page.locator('section.detail [data-attention-line]')
    await line.getByText('waiting: permission for Bash').waitFor()
    await shots('attention-waiting')
    // The rate-limited one's detail says it is not hung.
    await row('limited').locator('.agent-name').click()
    await page.locator('section.detail [data-attention-line]', {hasText: 'not hung'}).waitFor()
    await shots('attention-rate-limit')

    // Acknowledge with the key, on the selected row.
    await row('ask').locator('.agent-name').click()
    await page.locator('section.detail [data-attention-line]').waitFor()
    await page.locator('section.detail h2').click() // focus off any button
    await page.keyboard.press('a')
    await inGroup('working', 'ask').waitFor()
    await page.locator('section.detail [data-attention-line]').waitFor({state: 'detached'})
    await page.locator('.sidebar .project.selected [data-attention]').waitFor({state: 'detached'})
    assert.equal(await page.locator('[data-summary] [data-attention]').count(), 0, 'the header counts nobody in Needs you')
    // It still waits; the activity says so.
    await row('ask').locator('[data-waiting="you"]').waitFor()
    await shots('attention-acknowledged')
    await api('POST', `/v1/projects/${project.id}/stop-all`)
    await closeToasts()
  })

  test('a keep-alive agent that keeps crashing is a crash loop in Needs you, with its next try', async () => {
    await api('POST', `/v1/projects/${project.id}/agents`, {id: 'loop', command: 'sh', args: ['-c', 'echo starting; exit 1'],
      keepAlive: true, graceSec: 1})
    await row('loop').waitFor()
    const started = Date.now()
    await api('POST', `/v1/projects/${project.id}/agents/loop/start`)
    // Restarts after 2, 4, 8 and 16 s: the fifth crash comes after about 30 s.
    const loop = inGroup('attention', 'loop').locator('[data-crash-loop]')
    await loop.waitFor({timeout: 60_000})
    console.log(`crash loop shown ${Date.now() - started} ms after the first start`)
    assert.match(await loop.textContent(), /^crash loop ×[5-9]( · (retry in \d+ s|restarting))?$/)
    await row('loop').locator('.agent-name').click()
    await page.locator('section.detail [data-attention-line]', {hasText: /Needs you: crash loop/}).waitFor()
    await shots('crash-loop')
    // Acknowledged, the loop stays out of Needs you while it goes on the same way, still counted in its row.
    const before = (await api('GET', `/v1/projects/${project.id}/agents/loop`)).restartFailureCount
    await api('POST', `/v1/projects/${project.id}/agents/loop/ack`)
    await inGroup('attention', 'loop').waitFor({state: 'detached'})
    for (let i = 0; i < 80; i++) { // the next crash: within its backoff (32 s, 60 s)
      if ((await api('GET', `/v1/projects/${project.id}/agents/loop`)).restartFailureCount > before) break
      await sleep(1000)
    }
    assert.ok((await api('GET', `/v1/projects/${project.id}/agents/loop`)).restartFailureCount > before, 'no crash after the acknowledgment')
    await sleep(300)
    assert.equal(await inGroup('attention', 'loop').count(), 0, 'the acknowledged loop came back to Needs you')
    await row('loop').locator('[data-crash-loop="acknowledged"]', {hasText: /^crash loop ×\d+/}).waitFor()
    await api('POST', `/v1/projects/${project.id}/agents/loop/stop`)
    await waitStatus('loop', 'stopped')
    await page.locator('section.detail button[aria-label="Close detail"]').click()
    await closeToasts()
  })

  test('a toast never covers a dialog’s buttons; the buttons stay in view at 1024×700', async () => {
    // One failing agent per screenshot: a second failure of the same agent within a minute is coalesced, not toasted.
    for (let i = 1; i <= 4; i++) {
      await api('POST', `/v1/projects/${project.id}/agents`, {id: `oops-${i}`, command: 'sh', args: ['-c', 'exit 3'], graceSec: 1})
    }
    await row('oops-4').waitFor()
    let n = 0
    for (const [size, vp] of [['1280', WIDE], ['1024', NARROW]]) {
      await page.setViewportSize(vp)
      for (const scheme of ['light', 'dark']) {
        await page.emulateMedia({colorScheme: scheme})
        await closeToasts()
        await page.getByRole('button', {name: 'New agent'}).click()
        const dialog = page.getByRole('dialog', {name: 'New agent'})
        await dialog.getByRole('button', {name: 'Claude Code'}).click() // the tallest form
        // A failure while the dialog is open: its toast comes up.
        await api('POST', `/v1/projects/${project.id}/agents/oops-${n + 1}/start`)
        await page.locator('[data-sonner-toast]', {hasText: `oops-${n + 1}`}).first().waitFor()
        await sleep(400) // the toast's entrance
        for (const name of ['Cancel', 'Create agent', 'Create and start']) {
          const button = dialog.getByRole('button', {name, exact: true})
          const hit = await button.evaluate((b) => {
            const r = b.getBoundingClientRect()
            const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2)
            return {inView: r.top >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth, onTop: b === top || b.contains(top)}
          })
          assert.ok(hit.inView, `${name} is out of view at ${size}`)
          assert.ok(hit.onTop, `${name} is covered at ${size}`)
        }
        await page.screenshot({path: join(OUT, `toast-over-dialog-${size}-${scheme}.png`)})
        // The silence check as it applies to this agent (a Claude Code one), further down the form.
        await dialog.locator('fieldset.silence').scrollIntoViewIfNeeded()
        await dialog.locator('[data-silence-rule]', {hasText: /with no CPU use → its log is read/}).waitFor()
        await page.screenshot({path: join(OUT, `form-silence-${size}-${scheme}.png`)})
        await page.keyboard.press('Escape')
        await dialog.waitFor({state: 'detached'})
        n++
      }
    }
    assert.equal(n, 4)
    await page.emulateMedia({colorScheme: 'light'})
    await page.setViewportSize(WIDE)
    await closeToasts()
  })
}
