// Arguments as one line of text: split like a shell does (quotes and
// backslashes), joined back with quotes where needed.

export function splitArgs(s: string): string[] {
  const out: string[] = []
  let cur = ''
  let quote: '"' | "'" | null = null
  let has = false
  for (let i = 0; i < s.length; i++) {
    const c = s[i]
    if (quote) {
      if (c === quote) quote = null
      else if (c === '\\' && quote === '"' && i + 1 < s.length) cur += s[++i]
      else cur += c
      continue
    }
    if (c === '"' || c === "'") {
      quote = c
      has = true
    } else if (c === '\\' && i + 1 < s.length) {
      cur += s[++i]
      has = true
    } else if (/\s/.test(c)) {
      if (has) out.push(cur)
      cur = ''
      has = false
    } else {
      cur += c
      has = true
    }
  }
  if (has) out.push(cur)
  return out
}

export function joinArgs(args: readonly string[] | null | undefined): string {
  return (args ?? []).map((a) => (a === '' || /[\s"'\\]/.test(a) ? `'${a.replace(/'/g, `'\\''`)}'` : a)).join(' ')
}

/** Keys whose values are secrets: masked in the UI. */
export function looksSecret(key: string): boolean {
  return /(secret|token|key|passw|pwd|credential|auth|cookie|session)/i.test(key)
}
