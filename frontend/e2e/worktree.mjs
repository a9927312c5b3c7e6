// A worktree agent in a real git repository: the form's option, the agent
// working on its own branch, its branch and diff in the detail, and the
// remove dialog's choices (a dirty worktree asks), merged into the base.
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
  test('worktree: a git project gets a worktree agent; its branch and diff show; remove offers keep/merge/discard', async () => {
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

    // Remove: the choices, and the dirty worktree asks before merging.
    await row('feature').getByRole('button', {name: 'More actions for feature'}).click()
    await page.getByRole('menuitem', {name: 'Remove…'}).click()
    const rm = page.getByRole('dialog', {name: 'Remove feature'})
    await rm.getByText('1 ahead of main').waitFor()
    await rm.getByRole('radio', {name: /Merge into the base/}).check()
    await rm.getByText('Its worktree has uncommitted changes.').waitFor()
    assert.equal(await rm.getByRole('button', {name: 'Merge and remove'}).isDisabled(), true)
    await shots('worktree-remove')
    await rm.getByRole('checkbox', {name: 'Lose the uncommitted changes'}).check()
    await rm.getByRole('button', {name: 'Merge and remove'}).click()
    await rm.waitFor({state: 'detached'})
    await row('feature').waitFor({state: 'detached'})
    assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'ONE\ntwo\nthree\n', 'merged (fast-forward) into main')
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
