import {describe, expect, it} from 'vitest'
import type {Diff} from '../api'
import {aheadBehind, diffRows} from './diff'

const diff: Diff = {
  base: 'main', from: 'abc', added: 3, deleted: 1, truncated: false,
  files: [
    {path: 'a.go', status: 'modified', added: 2, deleted: 1, hunks: [{
      header: '@@ -10,2 +10,3 @@', oldStart: 10, oldLines: 2, newStart: 10, newLines: 3,
      lines: [{op: ' ', text: 'x'}, {op: '-', text: 'y'}, {op: '+', text: 'z'}, {op: '+', text: 'w'}, {op: '\\', text: ' No newline at end of file'}],
    }]},
    {path: 'logo.png', status: 'added', added: 0, deleted: 0, binary: true, hunks: []},
    {path: 'new.txt', oldPath: 'old.txt', status: 'renamed', added: 0, deleted: 0, hunks: null},
  ],
}

describe('diffRows', () => {
  it('flattens files, hunks and lines with their line numbers', () => {
    const {rows, starts} = diffRows(diff)
    expect(starts).toEqual([0, 7, 9])
    expect(rows.slice(0, 7)).toEqual([
      {kind: 'file', file: diff.files![0], n: 0},
      {kind: 'hunk', header: '@@ -10,2 +10,3 @@'},
      {kind: 'line', op: ' ', text: 'x', oldNo: 10, newNo: 10},
      {kind: 'line', op: '-', text: 'y', oldNo: 11},
      {kind: 'line', op: '+', text: 'z', newNo: 11},
      {kind: 'line', op: '+', text: 'w', newNo: 12},
      {kind: 'note', text: 'No newline at end of file'},
    ])
    expect(rows[8]).toEqual({kind: 'note', text: 'Binary file'})
    expect(rows[10]).toEqual({kind: 'note', text: 'Renamed, content unchanged'})
  })
  it('has no rows for no diff', () => {
    expect(diffRows(undefined)).toEqual({rows: [], starts: []})
  })
})

describe('aheadBehind', () => {
  it('says where the branch stands', () => {
    expect(aheadBehind(0, 0, 'main')).toBe('even with main')
    expect(aheadBehind(2, 0, 'main')).toBe('2 ahead of main')
    expect(aheadBehind(0, 3, 'main')).toBe('3 behind main')
    expect(aheadBehind(2, 1, 'dev')).toBe('2 ahead, 1 behind dev')
  })
})
