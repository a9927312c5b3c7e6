// No module of the frontend imports itself back through others: a circle
// makes the order modules load in matter (a value read before it is set)
// and ties files that should change alone. Type-only imports count too.
import {describe, expect, it} from 'vitest'

// Every module's text, by its path from the frontend's folder ("/src/App.tsx"), as Vite reads it.
const SOURCES = import.meta.glob<string>(['/src/**/*.{ts,tsx}', '!/src/**/*.d.ts'], {query: '?raw', import: 'default', eager: true})
const EXTS = ['.ts', '.tsx']

/** The relative modules a file imports or re-exports (static imports, `import type` included). */
export function importsOf(source: string): string[] {
  const specs: string[] = []
  const re = /(?:^|[;\s])(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"](\.[^'"]+)['"]/g
  for (const m of source.matchAll(re)) specs.push(m[1])
  return specs
}

/** The module a relative import names, among the known paths ("./x" from "/src/a/b.ts" is "/src/a/x.ts"). */
export function resolveSpec(from: string, spec: string, known: {has: (p: string) => boolean}): string | null {
  const parts = from.split('/').slice(0, -1)
  for (const seg of spec.split('/')) {
    if (seg === '..') parts.pop()
    else if (seg !== '.') parts.push(seg)
  }
  const base = parts.join('/')
  return [base, ...EXTS.map((e) => base + e), ...EXTS.map((e) => `${base}/index${e}`)].find((p) => known.has(p)) ?? null
}

/** Every circle in the graph, each once (as the path from its first module back to it). */
export function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = []
  const seen = new Set<string>()
  const onPath: string[] = []
  const visit = (n: string) => {
    const at = onPath.indexOf(n)
    if (at >= 0) {
      found.push([...onPath.slice(at), n])
      return
    }
    if (seen.has(n)) return
    seen.add(n)
    onPath.push(n)
    for (const m of graph.get(n) ?? []) visit(m)
    onPath.pop()
  }
  for (const n of graph.keys()) visit(n)
  return found
}

describe('imports', () => {
  it('finds a circle, type-only imports included, and imports of every form', () => {
    expect(importsOf(`import type {ColumnId} from './AgentList'\nimport {a, b} from "../x"\nexport {c} from './c'\nimport './style.css'\nimport x from 'react'`))
      .toEqual(['./AgentList', '../x', './c', './style.css'])
    expect(importsOf(`import {\n  a,\n  b,\n} from './multi'`)).toEqual(['./multi'])
    const g = new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]])
    expect(cycles(g)).toEqual([['a', 'b', 'c', 'a']])
    expect(cycles(new Map([['a', ['b']], ['b', []]]))).toEqual([])
    const known = new Set(['/src/a/x.ts', '/src/b.tsx', '/src/c/index.ts'])
    expect(resolveSpec('/src/a/y.ts', './x', known)).toBe('/src/a/x.ts')
    expect(resolveSpec('/src/a/y.ts', '../b', known)).toBe('/src/b.tsx')
    expect(resolveSpec('/src/a/y.ts', '../c', known)).toBe('/src/c/index.ts')
    expect(resolveSpec('/src/a/y.ts', './style.css', known)).toBeNull()
  })

  it('no module of src imports itself back', () => {
    const known = new Set(Object.keys(SOURCES))
    const graph = new Map(Object.entries(SOURCES).map(([f, text]) =>
      [f, importsOf(text).map((s) => resolveSpec(f, s, known)).filter((p): p is string => !!p)]))
    expect(graph.size).toBeGreaterThan(50)
    expect(graph.get('/src/App.tsx')).toContain('/src/screens/agents/AgentsScreen.tsx')
    expect(cycles(graph).map((c) => c.join(' → '))).toEqual([])
  })
})
