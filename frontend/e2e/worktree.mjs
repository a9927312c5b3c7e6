// A worktree agent in a real git repository: the form's option, the agent
// working on its own branch, its branch and diff in the detail, the remove
// dialog's choices, a merge of its uncommitted work (committed first, the
// message edited), and a conflict: aborted with nothing lost, the agent
// asked to merge the base and resolve, its resolution merged.
import {test} from 'node:test'
import assert from 'node:assert/strict'
import {execFileSync} from 'node:child_process'
import {readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {api, openNewAgent, page, row, shot, shots, showNewProject, waitStatus} from './lib.mjs'

const detail = () => page.locator('section.detail')
const git = (dir, ...args) => execFileSync('git', args, {cwd: dir, encoding: 'utf8'})

// The agent's work: an edit and a new file committed, a file deleted, and a
// note and a longer file not committed yet.
const SCRIPT = [
  'sed -i s/one/ONE/ a.txt',
  'printf "line %s\\n" $(seq 1 40) > src/gen.txt',
  'git rm -q c.txt',
  'git add -A && git commit -qm "agent work"',
  'echo "a draft" > notes.md',
  'printf "extra\\n" >> b.txt',
  'echo finished',
].join(' && ')

export function worktreeTests() {
  test('worktree: a git project gets a worktree agent; its branch and diff show; merge takes what the diff shows; a conflict has its ways out', async () => {
    const project = await showNewProject('repo')
    const dir = project.path
    git(dir, 'init', '-q', '-b', 'main')
    git(dir, 'config', 'user.name', 'E2E')
    git(dir, 'config', 'user.email', 'e2e@example.com')
    writeFileSync(join(dir, 'a.txt'), 'one\ntwo\nthree\n')
    writeFileSync(join(dir, 'b.txt'), 'bee\n')
    writeFileSync(join(dir, 'c.txt'), 'sea\n')
    execFileSync('mkdir', ['-p', join(dir, 'src')])
    writeFileSync(join(dir, 'src', 'keep.txt'), 'kept\n')
    git(dir, 'add', '-A')
    git(dir, 'commit', '-qm', 'initial')

    // The form: a preset in a git project ticks its own worktree.
    const dialog = await openNewAgent()
    await dialog.getByRole('button', {name: 'Claude Code'}).click()
    const box = dialog.getByRole('checkbox', {name: 'Own git worktree'})
    await page.waitForFunction(() => document.querySelector('input[name="worktree"]')?.checked)
    await dialog.locator('[name="prompt"]').fill('Refactor the parser')
    await dialog.locator('[name="base"]').scrollIntoViewIfNeeded()
    await shot('worktree-form-1280-light')
    // A custom command opts in by hand.
    await dialog.getByRole('button', {name: 'Custom command'}).click()
    assert.equal(await box.isChecked(), false)
    await box.check()
    await dialog.locator('[name="base"]').fill('main')
    await dialog.locator('[name="id"]').fill('feature')
    await dialog.locator('[name="command"]').fill('sh')
    await dialog.locator('[name="args"]').fill(`-c '${SCRIPT}'`)
    await dialog.locator('[name="graceSec"]').fill('1')
    await dialog.getByRole('button', {name: 'Create and start'}).click()
    await dialog.waitFor({state: 'detached'})
    await waitStatus('feature', 'completed')

    const rec = await api('GET', `/v1/projects/${project.id}/agents/feature`)
    assert.equal(rec.workspace.branch, 'shepherd/feature')
    assert.equal(rec.cwd, rec.workspace.path)
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'one\ntwo\nthree\n', 'the main checkout is untouched')

    // The detail: its branch, 1 ahead with uncommitted changes, and the Diff tab.
    await row('feature').locator('.agent-name').click()
    const badge = detail().locator('.worktree-badge')
    await badge.getByText('⎇ shepherd/feature').waitFor()
    await badge.getByText('1 ahead of main · uncommitted').waitFor()
    await badge.click()
    await detail().getByRole('tab', {name: 'Diff', selected: true}).waitFor()
    await detail().getByText('5 files changed').waitFor()
    const files = await detail().getByRole('option').allTextContents()
    assert.deepEqual(files, ['Ma.txt+1−1', 'Mb.txt+1−0', 'Dc.txt+0−1', 'Asrc/gen.txt+40−0', 'Unotes.md+1−0'])
    await detail().locator('.diff-line.add', {hasText: 'ONE'}).waitFor()
    await detail().getByRole('option', {name: /src\/gen.txt/}).click()
    await shots('worktree-diff')

    // Remove: the choices. A merge takes the uncommitted work (it shows what it
    // commits, no "lose the changes"); keeping the folder's end asks.
    await row('feature').getByRole('button', {name: 'More actions for feature'}).click()
    await page.getByRole('menuitem', {name: 'Remove…'}).click()
    const rm = page.getByRole('dialog', {name: 'Remove feature'})
    await rm.getByText('1 ahead of main').waitFor()
    await rm.getByText('Its worktree has uncommitted changes.').waitFor() // keep, the default, would lose them
    await rm.getByRole('radio', {name: /Merge into the base/}).check()
    const committed = rm.getByRole('list', {name: 'What is committed first'})
    await committed.waitFor()
    assert.deepEqual((await committed.getByRole('listitem').allTextContents()).sort(), ['Mb.txt', 'Unotes.md'])
    assert.equal(await rm.getByRole('checkbox', {name: 'Lose the uncommitted changes'}).count(), 0)
    assert.equal(await rm.getByRole('button', {name: 'Merge and remove'}).isEnabled(), true)
    await shots('worktree-remove')
    await rm.getByRole('button', {name: 'Cancel'}).click()
    await rm.waitFor({state: 'detached'})

    // Merge from the Diff, keeping the agent: what the Diff shows is committed
    // (the message edited) as the user, then merged.
    await detail().getByRole('button', {name: 'Merge…'}).click()
    const mg = page.getByRole('dialog', {name: 'Merge feature into main'})
    await mg.getByRole('list', {name: 'What is committed first'}).waitFor()
    await mg.getByText(/as E2E <e2e@example.com>/).waitFor()
    const msg = mg.getByRole('textbox', {name: 'Commit message'})
    assert.match(await msg.inputValue(), /^Work of agent feature\n/)
    await msg.fill('The parser, refactored\n\nNotes and a last fix, as the agent left them.')
    await shots('worktree-merge')
    await mg.getByRole('button', {name: 'Commit and merge'}).click()
    await mg.waitFor({state: 'detached'})
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'ONE\ntwo\nthree\n', 'merged (fast-forward) into main')
    assert.equal(readFileSync(join(dir, 'notes.md'), 'utf8'), 'a draft\n', 'the untracked file is merged')
    assert.equal(readFileSync(join(dir, 'b.txt'), 'utf8'), 'bee\nextra\n', 'the uncommitted edit is merged')
    assert.equal(git(dir, 'log', '-1', '--format=%s|%an').trim(), 'The parser, refactored|E2E')
    await badge.getByText('even with main').waitFor() // the chip follows the merge
    await detail().getByText('No changes against main yet.').waitFor()

    // A conflict: aborted with nothing lost, and its two ways out; the agent is
    // asked to merge the base and resolve, and its resolution merges.
    await api('POST', `/v1/projects/${project.id}/agents`, {id: 'clash', command: 'sh', graceSec: 1,
      args: ['-c', 'echo "agent line" > a.txt'],
      resumeArgs: ['-c', 'echo "asked: $1" && printf "ONE\\nagent line and user line\\nthree\\n" > a.txt', 'sh', '{prompt}'],
      workspace: {worktree: true, base: 'main'}})
    await api('POST', `/v1/projects/${project.id}/agents/clash/start`)
    await waitStatus('clash', 'completed')
    writeFileSync(join(dir, 'a.txt'), 'ONE\nuser line\nthree\n')
    git(dir, 'commit', '-qam', 'the user edits a.txt')
    await row('clash').locator('.agent-name').click()
    await detail().getByRole('tab', {name: 'Diff'}).click()
    await detail().getByText('1 file changed').waitFor()
    await detail().getByRole('button', {name: 'Merge…'}).click()
    const cm = page.getByRole('dialog', {name: 'Merge clash into main'})
    await cm.getByRole('button', {name: 'Commit and merge'}).click()
    await cm.getByText(/The merge was aborted: nothing is lost/).waitFor()
    await cm.getByText('a.txt', {exact: true}).waitFor()
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'ONE\nuser line\nthree\n', 'the user\'s checkout is as it was')
    assert.equal(git(dir, 'status', '--porcelain'), '')
    await shots('worktree-conflict')
    await cm.getByRole('button', {name: 'Ask clash to merge main and resolve'}).click()
    await cm.waitFor({state: 'detached'})
    await page.getByText('Asked clash to resolve a.txt').waitFor()
    await waitStatus('clash', 'completed')
    const clashBadge = detail().locator('.worktree-badge')
    await clashBadge.getByText('merging main: resolved, merge to commit').waitFor()
    await shot('worktree-resolved-1280-light')
    await detail().getByRole('button', {name: 'Merge…'}).click()
    const rs = page.getByRole('dialog', {name: 'Merge clash into main'})
    await rs.getByText(/is resolved: it is committed first/).waitFor()
    await rs.getByRole('button', {name: 'Commit and merge'}).click()
    await rs.waitFor({state: 'detached'})
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'ONE\nagent line and user line\nthree\n', 'the resolution is merged')

    // Removed after its merge: the branch is deleted.
    await row('feature').getByRole('button', {name: 'More actions for feature'}).click()
    await page.getByRole('menuitem', {name: 'Remove…'}).click()
    const rm2 = page.getByRole('dialog', {name: 'Remove feature'})
    await rm2.getByRole('radio', {name: /Merge into the base/}).check()
    await rm2.getByText(/Nothing to merge|commits are merged as they are/).first().waitFor()
    await rm2.getByRole('button', {name: 'Merge and remove'}).click()
    await rm2.waitFor({state: 'detached'})
    await row('feature').waitFor({state: 'detached'})
    assert.equal(git(dir, 'branch', '--list', 'shepherd/feature'), '', 'the merged branch is deleted')

    // A worktree deleted behind Shepherd's back is reported, never made again.
    const gone = await api('POST', `/v1/projects/${project.id}/agents`, {id: 'gone', command: 'true', workspace: {worktree: true}})
    rmSync(gone.workspace.path, {recursive: true, force: true})
    await api('POST', `/v1/projects/${project.id}/agents/gone/worktree/refresh`)
    await row('gone').locator('.agent-name').click()
    await detail().locator('.worktree-badge.bad', {hasText: 'vanished'}).waitFor()
    await detail().getByRole('tab', {name: 'Diff'}).click()
    await detail().getByText(/worktree folder .* vanished/).first().waitFor()
    await shot('worktree-vanished-1280-light')
  })
}
