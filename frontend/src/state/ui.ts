// Small UI state: which project and agent are selected and which dialog is
// open. Server state lives in react-query, not here.
import {create} from 'zustand'

export type Dialog =
  | {kind: 'addProject'}
  | {kind: 'renameProject'; projectId: string}
  | {kind: 'removeProject'; projectId: string}
  | {kind: 'createAgent'}
  | {kind: 'editAgent'; agentId: string}
  | {kind: 'removeAgent'; agentId: string}
  | {kind: 'settings'}

const LAST_PROJECT = 'shepherd.lastProject'

function readLast(): string | null {
  try {
    return localStorage.getItem(LAST_PROJECT)
  } catch {
    return null
  }
}

interface UIState {
  projectId: string | null
  agentId: string | null
  dialog: Dialog | null
  filter: string
  selectProject: (id: string | null) => void
  selectAgent: (id: string | null) => void
  open: (d: Dialog) => void
  close: () => void
  setFilter: (f: string) => void
}

export const useUI = create<UIState>((set) => ({
  projectId: readLast(),
  agentId: null,
  dialog: null,
  filter: '',
  selectProject: (id) => {
    try {
      if (id) localStorage.setItem(LAST_PROJECT, id)
    } catch {
      // storage unavailable: only the choice is not remembered
    }
    set({projectId: id, agentId: null, filter: ''})
  },
  selectAgent: (id) => set({agentId: id}),
  open: (dialog) => set({dialog}),
  close: () => set({dialog: null}),
  setFilter: (filter) => set({filter}),
}))
