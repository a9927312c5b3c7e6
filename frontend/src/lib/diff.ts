// A worktree's diff as rows for one virtualised list: a header row per file,
// a row per hunk header, a row per line (with its old and new line numbers).
import type {Diff, FileDiff} from '../api'

export type DiffRow =
  | {kind: 'file'; file: FileDiff; n: number}
  | {kind: 'hunk'; header: string}
  | {kind: 'line'; op: string; text: string; oldNo?: number; newNo?: number}
  | {kind: 'note'; text: string}

/** The rows of d, and the row where each file starts. */
export function diffRows(d: Diff | undefined): {rows: DiffRow[]; starts: number[]} {
  const rows: DiffRow[] = []
  const starts: number[] = []
  for (const [n, f] of (d?.files ?? []).entries()) {
    starts.push(rows.length)
    rows.push({kind: 'file', file: f, n})
    if (f.note) {
      rows.push({kind: 'note', text: f.note.charAt(0).toUpperCase() + f.note.slice(1)})
      continue
    }
    if (f.binary) {
      rows.push({kind: 'note', text: 'Binary file'})
      continue
    }
    const hunks = f.hunks ?? []
    if (hunks.length === 0) {
      rows.push({kind: 'note', text: d?.truncated ? 'Too large to show' : f.status === 'renamed' ? 'Renamed, content unchanged' : 'No lines to show'})
      continue
    }
    for (const h of hunks) {
      rows.push({kind: 'hunk', header: h.header})
      let oldNo = h.oldStart
      let newNo = h.newStart
      for (const l of h.lines ?? []) {
        if (l.op === '+') rows.push({kind: 'line', op: '+', text: l.text, newNo: newNo++})
        else if (l.op === '-') rows.push({kind: 'line', op: '-', text: l.text, oldNo: oldNo++})
        else if (l.op === ' ') rows.push({kind: 'line', op: ' ', text: l.text, oldNo: oldNo++, newNo: newNo++})
        else rows.push({kind: 'note', text: l.text.trim()})
      }
    }
  }
  return {rows, starts}
}

/** A file's status as one letter, as git status shows it. */
export const STATUS_MARK: Record<string, string> = {added: 'A', deleted: 'D', modified: 'M', renamed: 'R', copied: 'C', untracked: 'U',
  typechange: 'T', conflicted: '!'}

/** What kind of file a diff's file is when it is not a plain one ("symlink"), from git's mode. */
export function fileKind(mode?: string): string {
  return mode === '120000' ? 'symlink' : mode === '160000' ? 'submodule' : ''
}

/** "2 ahead of main", "1 behind main", "2 ahead, 1 behind main": a worktree's place against its base. */
export function aheadBehind(ahead: number, behind: number, base: string): string {
  if (!ahead && !behind) return `even with ${base}`
  if (!behind) return `${ahead} ahead of ${base}`
  return `${ahead ? `${ahead} ahead, ` : ''}${behind} behind ${base}`
}
