// Small time formatting helpers; `now` is a parameter so tests can fix it.

export function parseTime(t?: string | null): number | null {
  if (!t) return null
  const ms = Date.parse(t)
  if (Number.isNaN(ms) || ms <= 0) return null
  return ms
}

/** "just now", "42 s ago", "2 min ago", "3 h ago", "5 d ago". */
export function ago(t: string | null | undefined, now = Date.now()): string {
  const ms = parseTime(t)
  if (ms === null) return '—'
  const s = Math.max(0, Math.round((now - ms) / 1000))
  if (s < 5) return 'just now'
  if (s < 60) return `${s} s ago`
  if (s < 3600) return `${Math.floor(s / 60)} min ago`
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`
  return `${Math.floor(s / 86400)} d ago`
}

/** "in 8 s", "in 2 min"; "now" when due. */
export function inTime(t: string | null | undefined, now = Date.now()): string {
  const ms = parseTime(t)
  if (ms === null) return ''
  const s = Math.round((ms - now) / 1000)
  if (s <= 0) return 'now'
  if (s < 120) return `in ${s} s`
  return `in ${Math.round(s / 60)} min`
}

/** A duration as "45 s", "3 min 05 s", "2 h 07 min". */
export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000))
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`
}

/**
 * One formatter per format, made on first use and kept: Date's
 * toLocaleString builds a new ICU formatter on every call, tens of KB of
 * native memory each, and the list re-renders every row's times each second.
 * In WebKit that churn left the web process's heap growing by 100 MiB a
 * minute and more (freed, but never handed back).
 */
function formatter(options: Intl.DateTimeFormatOptions): (ms: number) => string {
  let f: Intl.DateTimeFormat | null = null
  return (ms) => (f ??= new Intl.DateTimeFormat(undefined, options)).format(ms)
}

const clockFormat = formatter({month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit'})
const exactFormat = formatter({year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit'})

/** Local date and time, short. */
export function clock(t?: string | null): string {
  const ms = parseTime(t)
  if (ms === null) return '—'
  return clockFormat(ms)
}

/** A compact duration: "45 s", "6 min", "2 h 07 min", "3 d". */
export function short(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000))
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min`
  if (s < 86400) return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`
  return `${Math.floor(s / 86400)} d`
}

/** The exact local time, for tooltips. */
export function exact(t?: string | null): string {
  const ms = parseTime(t)
  return ms === null ? '' : exactFormat(ms)
}
