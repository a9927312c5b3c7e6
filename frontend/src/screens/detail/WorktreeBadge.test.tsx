import {render, screen} from '@testing-library/react'
import {describe, expect, it} from 'vitest'
import {agent} from '../../test/fixtures'
import {WorktreeBadge} from './WorktreeBadge'

const wt = (patch: object) => agent({id: 'feat', workspace: {worktree: true, base: 'main', branch: 'shepherd/feat', path: '/wt/feat', ...patch}})

describe('WorktreeBadge', () => {
  it('says where the branch stands, and an agent merging its base', () => {
    const {rerender} = render(<WorktreeBadge agent={wt({ahead: 2, behind: 1, dirty: true})}/>)
    expect(screen.getByRole('button').textContent).toBe('⎇ shepherd/feat2 ahead, 1 behind main · uncommitted')
    rerender(<WorktreeBadge agent={wt({ahead: 2, behind: 1, merging: true, conflicts: ['a.go', 'b.go']})}/>)
    expect(screen.getByRole('button').textContent).toContain('merging main: 2 conflicts')
    expect(screen.getByRole('button').title).toContain('conflicts left in a.go, b.go')
    rerender(<WorktreeBadge agent={wt({ahead: 2, behind: 1, merging: true, conflicts: []})}/>)
    expect(screen.getByRole('button').textContent).toBe('⎇ shepherd/featmerging main: resolved, merge to commit')
  })
})
