// The permission sandbox in words: grants to tags and back, what they allow,
// and what this machine lacks to enforce them. Pure functions, so the form,
// the list, the detail and the tests agree.
import type {Grants, SandboxSupport} from '../api'

export const NETWORK = '@network'
export const WRITE = '@write:'

/** The form's side of the sandbox. */
export interface SandboxValues {
  sandboxed: boolean
  network: boolean
  writeDirs: string[]
  /** Tags the form does not edit (`@read:…`), kept as they were. */
  otherTags: string[]
}

export const UNSANDBOXED: SandboxValues = {sandboxed: false, network: false, writeDirs: [], otherTags: []}

/** The spec's permissions: null when not sandboxed (the engine then runs it as before), else the tags (maybe none). */
export function tagsOf(v: SandboxValues): string[] | null {
  if (!v.sandboxed) return null
  const dirs = v.writeDirs.map((d) => d.trim()).filter(Boolean)
  return [...(v.network ? [NETWORK] : []), ...dirs.map((d) => WRITE + d), ...v.otherTags]
}

/** A record's grants as the form shows them. */
export function valuesOfGrants(g: Grants | null | undefined): SandboxValues {
  if (!g) return UNSANDBOXED
  const tags = g.permissions ?? []
  const writeDirs = g.writeDirs?.length ? g.writeDirs : tags.filter((t) => t.startsWith(WRITE)).map((t) => t.slice(WRITE.length))
  return {
    sandboxed: true,
    network: g.network || tags.includes(NETWORK),
    writeDirs: [...writeDirs],
    otherTags: tags.filter((t) => t !== NETWORK && !t.startsWith(WRITE)),
  }
}

/** What of the grants the words say. */
type Said = Pick<Grants, 'network' | 'writeDirs'>

const dirsOf = (g: Said) => g.writeDirs ?? []

/** One line for a tooltip or a field: "network; writes in /a, /b" or "no network; writes only to its log". */
export function grantsText(g: Said): string {
  const dirs = dirsOf(g)
  return `${g.network ? 'network' : 'no network'}; ${dirs.length ? `writes in ${dirs.join(', ')}` : 'writes only to its log'}`
}

/** The lock's tooltip: what a sandboxed agent may and may not do. */
export function grantsTitle(g: Said): string {
  const dirs = dirsOf(g)
  return [
    'Sandboxed: reads any file',
    g.network ? 'Network: allowed' : 'Network: none',
    dirs.length ? `Writes: its log, and in ${dirs.join(', ')} (and below)` : 'Writes: only its own log',
  ].join('\n')
}

const orUnknown = (s?: string) => s || 'reason unknown'

/**
 * What this machine lacks to enforce a sandbox with or without network, as
 * the engine checks it at start; [] when it can. Writes are always
 * restricted, so the filesystem part is always needed; taking the network
 * away only without @network.
 */
export function missingFor(s: SandboxSupport | undefined, network: boolean): string[] {
  if (!s) return []
  switch (s.os) {
    case 'linux': {
      const out: string[] = []
      if (!s.landlock) out.push(`Landlock, which limits writes to the chosen folders (${orUnknown(s.landlockError)})`)
      if (!network && !s.netns) out.push(`network namespaces, which take the network away (${orUnknown(s.netnsError)})`)
      return out
    }
    case 'darwin':
      return s.seatbelt ? [] : [`sandbox-exec (${orUnknown(s.seatbeltError)})`]
  }
  return [`a sandbox for ${s.os} (Shepherd sandboxes on Linux and macOS)`]
}

/** The settings' line: what this machine enforces. */
export function supportText(s: SandboxSupport): {text: string; ok: boolean} {
  switch (s.os) {
    case 'linux': {
      const fs = s.landlock ? `Landlock${s.landlockAbi ? ` (ABI ${s.landlockAbi})` : ''} limits writes` : `no Landlock (${orUnknown(s.landlockError)})`
      const net = s.netns ? 'network namespaces take the network away' : `no network namespaces (${orUnknown(s.netnsError)})`
      return {text: `${fs}; ${net}.`, ok: s.landlock && s.netns}
    }
    case 'darwin':
      return s.seatbelt
        ? {text: 'sandbox-exec (Seatbelt) limits writes and the network.', ok: true}
        : {text: `no sandbox-exec (${orUnknown(s.seatbeltError)}).`, ok: false}
  }
  return {text: `no sandbox on ${s.os}.`, ok: false}
}
