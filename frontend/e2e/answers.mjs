// Answers from the window (SPEC "Answers"): a Claude agent (the fake
// Claude, calling Shepherd's permission tool over MCP as Claude Code does)
// asks permission for each Bash command: answered from its row (Allow once),
// then from its detail (Always allow with the suggested rule, edited; Deny
// with a message); the rule is listed in its record tab and removed there;
// a question to choose from is answered by a click, and the agent is
// replied to once its run ended.
import {test} from 'node:test'
import assert from 'node:assert/strict'
import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {api, page, row, shots, showNewProject, waitStatus} from './lib.mjs'

const STREAM = ['-p', '--verbose', '--output-format', 'stream-json']
const inGroup = (group, id) => page.locator(`tbody[data-group="${group}"] tr[data-agent="${id}"]`)
const bash = (command) => ({tool: 'Bash', input: {command, description: `Run ${command}`}})

export function answersTests() {
  let project

  test('answers: a permission asked in Needs you is allowed from the row, always allowed and denied from the detail', async () => {
    project = await showNewProject('answers')
    const dir = mkdtempSync(join(tmpdir(), 'shepherd-e2e-answers-'))
    await api('POST', `/v1/projects/${project.id}/agents`, {
      id: 'asker', command: 'claude', args: [...STREAM, 'tidy up'], profile: 'claude-stream-json', graceSec: 1, cwd: dir,
      env: {FAKE_CLAUDE_MODE: 'permission-tool', FAKE_CLAUDE_CALLS: JSON.stringify([
        bash('touch one'), bash('touch two'), bash('touch three'), bash('rm -rf build')])},
    })
    await row('asker').waitFor()
    await api('POST', `/v1/projects/${project.id}/agents/asker/start`)
    const asking = inGroup('attention', 'asker')
    await asking.locator('[data-waiting="you"]', {hasText: 'waiting: permission for Bash: touch one'}).waitFor({timeout: 10_000})
    await shots('answers-row')
    // The row's primary action answers it.
    await asking.locator('button[data-op="allow"]').click()
    await inGroup('attention', 'asker').locator('[data-waiting="you"]', {hasText: 'waiting: permission for Bash: touch two'}).waitFor()

    // The detail: the question, Always allow with the suggestion (edited), Deny with a message.
    await row('asker').locator('.agent-name').click()
    const panel = page.getByRole('alert', {name: 'Permission asked'})
    await panel.getByText('touch two').first().waitFor()
    const rule = panel.getByLabel('Rule to keep')
    assert.equal(await rule.inputValue(), 'Bash(touch two)')
    await rule.fill('Bash(touch:*)')
    await shots('answers-detail')
    await panel.getByRole('button', {name: 'Always allow'}).click()
    // touch three is allowed by the rule without asking; rm -rf build is asked.
    await panel.getByText('rm -rf build').first().waitFor()
    await panel.getByLabel('Message with a deny').fill('not the build, please')
    await shots('answers-deny')
    await panel.getByRole('button', {name: 'Deny'}).click()
    await waitStatus('asker', 'completed')
    for (const f of ['one', 'two', 'three']) assert.ok(existsSync(join(dir, f)), `${f} was not made`)

    // The rule, in its record tab, removed there.
    await page.getByRole('tab', {name: 'Record'}).click()
    const rules = page.getByRole('region', {name: 'Always-allow rules'})
    await rules.getByText('Bash(touch:*)').waitFor()
    await shots('answers-rules')
    await rules.getByRole('button', {name: 'Remove Bash(touch:*)'}).click()
    await rules.getByText('No rules: every call that needs approval is asked.').waitFor()
  })

  test('answers: a question to choose from is answered by a click', async () => {
    await api('POST', `/v1/projects/${project.id}/agents`, {
      id: 'chooser', command: 'claude', args: [...STREAM, 'set up the service'], profile: 'claude-stream-json', graceSec: 1,
      resumeArgs: [...STREAM, '--resume', '{sessionId}', '--', 'continue'],
      env: {FAKE_CLAUDE_MODE: 'ask-question', FAKE_CLAUDE_RESUME_MODE: 'success'},
    })
    await row('chooser').waitFor()
    await api('POST', `/v1/projects/${project.id}/agents/chooser/start`)
    await inGroup('attention', 'chooser').locator('[data-waiting="you"]', {hasText: 'waiting: your choice'}).waitFor({timeout: 10_000})
    await row('chooser').locator('.agent-name').click()
    const panel = page.getByRole('alert', {name: 'Question asked'})
    await panel.getByText('Which database should the service use?').waitFor()
    await panel.locator('[data-choice="SQLite"]').click()
    await shots('answers-choice')
    await panel.getByRole('button', {name: 'Answer'}).click()
    await waitStatus('chooser', 'completed')
    await page.getByRole('tab', {name: 'Conversation'}).click()
    await page.locator('section.detail').getByText(/SQLite/).first().waitFor()

    // A reply: it resumes the session with the message, shown as the user's turn.
    const box = page.getByLabel('Message to chooser')
    await box.fill('Thanks. Now write the migration.')
    await page.getByRole('form', {name: 'Reply'}).getByRole('button', {name: 'Send'}).click()
    await page.locator('section.detail [data-user-turn]', {hasText: 'Now write the migration.'}).waitFor()
    await waitStatus('chooser', 'completed')
    await shots('answers-reply')
    const calls = readFileSync(process.env.FAKE_CLAUDE_RECORD, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    const last = calls[calls.length - 1]
    assert.equal(last.args[last.args.length - 1], 'Thanks. Now write the migration.')
    assert.ok(last.resume, 'the reply resumed a session')
  })
}

export function usageTests() {
  test('answers: the toolbar shows the account’s window; a run refused by its usage limit waits, calm', async () => {
    const project = await showNewProject('usage-limits')
    await api('POST', `/v1/projects/${project.id}/agents`, {
      id: 'warned', command: 'claude', args: [...STREAM, 'go'], profile: 'claude-stream-json', graceSec: 1,
      env: {FAKE_CLAUDE_MODE: 'usage-warning'},
    })
    const resets = Math.floor(Date.now() / 1000) + 2 * 3600
    await api('POST', `/v1/projects/${project.id}/agents`, {
      id: 'limited', command: 'claude', args: [...STREAM, 'go'], profile: 'claude-stream-json', graceSec: 1,
      resumeArgs: [...STREAM, '--resume', '{sessionId}', '--', 'continue'],
      env: {FAKE_CLAUDE_MODE: 'usage-limit', FAKE_CLAUDE_RESETS_AT: String(resets)},
    })
    await row('limited').waitFor()
    await api('POST', `/v1/projects/${project.id}/agents/warned/start`)
    await waitStatus('warned', 'completed')
    await page.locator('[data-usage-windows]', {hasText: /5-hour: 91 % · resets \d\d:\d\d/}).waitFor()
    await api('POST', `/v1/projects/${project.id}/agents/limited/start`)
    await waitStatus('limited', 'paused')
    await row('limited').getByText(/usage limit until \d\d:\d\d \(5-hour\)/).first().waitFor()
    assert.equal(await page.locator('tbody[data-group="attention"] tr[data-agent="limited"]').count(), 0, 'a usage limit is not in Needs you')
    await shots('answers-usage')
  })
}
