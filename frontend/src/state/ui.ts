// Small UI state: which project and agent are selected and which dialog is
// open. Server state lives in react-query, not here.
import {create} from 'zustand'
import type {Group, Sort} from '../lib/groups'
import {lastSeen, markSeen} from '../lib/feed'

export type Dialog =
  | {kind: 'addProject'}
  | {kind: 'renameProject'; projectId: string}
  | {kind: 'removeProject'; projectId: string}
  | {kind: 'createAgent'}
  | {kind: 'editAgent'; agentId: string}
  | {kind: 'removeAgent'; agentId: string}
  | {kind: 'settings'}
  | {kind: 'prefs'}
  | {kind: 'stopAll'}
  | {kind: 'pauseProject'; projectId: string}
  | {kind: 'whileClosed'}
  | {kind: 'addHost'}
  | {kind: 'removeHost'; host: string}
  | {kind: 'hostAway'; host: string}

const LAST_PROJECT = 'shepherd.lastProject'

function readLast(): string | null {
  try {
    return localStorage.getItem(LAST_PROJECT)
  } catch {
    return null
  }
}

interface UIState {
  /** The machine the window shows: a host's name, or null for this computer. */
  host: string | null
  projectId: string | null
  agentId: string | null
  dialog: Dialog | null
  filter: string
  /** The row the keyboard is on (↑/↓); the detail shows agentId. */
  cursorId: string | null
  /** Status chips: only these groups are listed (none: all). */
  groups: ReadonlySet<Group>
  collapsed: ReadonlySet<Group>
  sort: Sort
  feedOpen: boolean
  /** Last time the feed was seen, per project (ms). */
  seen: Record<string, number>
  /** Project pauses under way: the agents each one waits for. */
  pausing: Record<string, readonly string[]>
  setPausing: (projectId: string, ids: readonly string[] | null) => void
  selectProject: (id: string | null) => void
  /** Shows another machine (null: this computer); its first project is selected. */
  selectHost: (host: string | null) => void
  selectAgent: (id: string | null) => void
  setCursor: (id: string | null) => void
  open: (d: Dialog) => void
  close: () => void
  setFilter: (f: string) => void
  toggleGroup: (g: Group) => void
  toggleCollapsed: (g: Group) => void
  sortBy: (key: Sort['key']) => void
  setFeedOpen: (open: boolean) => void
  markSeen: (projectIds: string[], at?: number) => void
  seenOf: (projectId: string) => number
}

const toggled = <T,>(set: ReadonlySet<T>, v: T) => {
  const next = new Set(set)
  if (next.has(v)) next.delete(v)
  else next.add(v)
  return next
}

export const useUI = create<UIState>((set, get) => ({
  host: null,
  projectId: readLast(),
  agentId: null,
  dialog: null,
  filter: '',
  cursorId: null,
  groups: new Set(),
  collapsed: new Set(),
  sort: {key: 'default', desc: false},
  feedOpen: false,
  seen: {},
  pausing: {},
  setPausing: (projectId, ids) => set((s) => {
    const pausing = {...s.pausing}
    if (ids) pausing[projectId] = ids
    else delete pausing[projectId]
    return {pausing}
  }),
  selectProject: (id) => {
    try {
      if (id) localStorage.setItem(LAST_PROJECT, id)
    } catch {
      // storage unavailable: only the choice is not remembered
    }
    set({projectId: id, agentId: null, cursorId: null, filter: ''})
  },
  selectHost: (host) => {
    if (get().host === host) return
    set({host, projectId: null, agentId: null, cursorId: null, filter: ''})
  },
  selectAgent: (id) => set(id ? {agentId: id, cursorId: id} : {agentId: null}),
  setCursor: (cursorId) => set({cursorId}),
  open: (dialog) => set({dialog}),
  close: () => set({dialog: null}),
  setFilter: (filter) => set({filter}),
  toggleGroup: (g) => set((s) => ({groups: toggled(s.groups, g)})),
  toggleCollapsed: (g) => set((s) => ({collapsed: toggled(s.collapsed, g)})),
  sortBy: (key) => set((s) => ({
    sort: s.sort.key === key ? (s.sort.desc ? {key: 'default', desc: false} : {key, desc: true}) : {key, desc: false},
  })),
  setFeedOpen: (feedOpen) => set({feedOpen}),
  markSeen: (ids, at = Date.now()) => {
    const seen = {...get().seen}
    for (const id of ids) {
      markSeen(id, at)
      seen[id] = at
    }
    set({seen})
  },
  seenOf: (id) => get().seen[id] ?? lastSeen(id),
}))
