// Reading Claude Code's `--output-format stream-json` lines into items a
// person can read. Only parsed objects count; anything else is shown raw.

export type StreamItem =
  | {kind: 'init'; sessionId: string; model?: string; cwd?: string}
  | {kind: 'text'; role: 'assistant' | 'user'; text: string}
  | {kind: 'tool'; name: string; input: string}
  | {kind: 'toolResult'; text: string; isError: boolean}
  | {kind: 'result'; ok: boolean; subtype: string; turns?: number; durationMs?: number; costUsd?: number; sessionId?: string; text?: string}
  | {kind: 'raw'; text: string}

type Json = Record<string, unknown>

const str = (v: unknown) => (typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v))
const num = (v: unknown) => (typeof v === 'number' ? v : undefined)

function contentItems(role: 'assistant' | 'user', content: unknown): StreamItem[] {
  if (typeof content === 'string') return [{kind: 'text', role, text: content}]
  if (!Array.isArray(content)) return []
  const out: StreamItem[] = []
  for (const c of content as Json[]) {
    if (c?.type === 'text') out.push({kind: 'text', role, text: str(c.text)})
    else if (c?.type === 'tool_use') out.push({kind: 'tool', name: str(c.name), input: str(c.input)})
    else if (c?.type === 'tool_result') {
      const t = Array.isArray(c.content) ? (c.content as Json[]).map((x) => str(x.text)).join('\n') : str(c.content)
      out.push({kind: 'toolResult', text: t, isError: c.is_error === true})
    }
  }
  return out
}

/** The items of one log line. */
export function parseStreamLine(line: string): StreamItem[] {
  const t = line.trim()
  if (!t.startsWith('{')) return t ? [{kind: 'raw', text: line}] : []
  let o: Json
  try {
    o = JSON.parse(t) as Json
  } catch {
    return [{kind: 'raw', text: line}]
  }
  switch (o.type) {
    case 'system':
      if (o.subtype === 'init') return [{kind: 'init', sessionId: str(o.session_id), model: str(o.model) || undefined, cwd: str(o.cwd) || undefined}]
      return []
    case 'assistant':
    case 'user':
      return contentItems(o.type, (o.message as Json | undefined)?.content)
    case 'result': {
      const isError = o.is_error === true || String(o.subtype ?? '').startsWith('error')
      return [{kind: 'result', ok: !isError, subtype: str(o.subtype), turns: num(o.num_turns),
        durationMs: num(o.duration_ms), costUsd: num(o.total_cost_usd), sessionId: str(o.session_id) || undefined,
        text: str(o.result) || undefined}]
    }
  }
  return [{kind: 'raw', text: line}]
}

export function parseStream(lines: readonly string[]): StreamItem[] {
  return lines.flatMap(parseStreamLine)
}

export interface Placed {
  item: StreamItem
  /** The index of the log line it came from. */
  line: number
}

/** The items of lines[from:], each with the index of its line. */
export function parseStreamFrom(lines: readonly string[], from = 0): Placed[] {
  const out: Placed[] = []
  for (let i = Math.max(0, from); i < lines.length; i++) {
    for (const item of parseStreamLine(lines[i])) out.push({item, line: i})
  }
  return out
}

/** The words of an item, for search. */
export function itemText(it: StreamItem): string {
  switch (it.kind) {
    case 'init': return `session ${it.sessionId} ${it.model ?? ''}`
    case 'text': return it.text
    case 'tool': return `${it.name} ${it.input}`
    case 'toolResult': return it.text
    case 'result': return `${it.subtype} ${it.text ?? ''} ${it.sessionId ?? ''}`
    case 'raw': return it.text
  }
}
