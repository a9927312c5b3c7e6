// Hosts in words: their state, and what happened while one was away.
import type {Host, HostAway} from '../api'
import {parseTime} from './time'

/** A time as the hour and minute ("14:02"). */
export function hhmm(t?: string | null): string {
  const ms = parseTime(t)
  if (ms === null) return '—'
  const d = new Date(ms)
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`
}

/** "connected", "unreachable since 14:02", "needs a newer engine", "refused since 14:02". */
export function hostStateText(h: Pick<Host, 'state' | 'since'>): string {
  switch (h.state) {
    case 'unreachable': return `unreachable since ${hhmm(h.since)}`
    case 'refused': return `refused since ${hhmm(h.since)}`
    case 'needs-newer-engine': return 'needs a newer engine'
    default: return h.state
  }
}

/** One agent's change while its host was away, in words. */
export function changeText(c: NonNullable<HostAway['agents']>[number]): string {
  const what: string[] = []
  if (!c.from) what.push('created')
  else if (!c.to) what.push('removed')
  if (c.ended === 1) what.push('ended')
  else if (c.ended > 1) what.push(`ended ${c.ended} times`)
  if (c.to && c.from && c.from !== c.to) what.push(`${c.from} → ${c.to}`)
  else if (c.to) what.push(c.to)
  if (c.exitCode != null && c.ended > 0) what.push(`exit code ${c.exitCode}`)
  if (c.attention) what.push(`needs you: ${c.attention}`)
  return what.join(', ')
}

/** A short summary of a host's while-away ("" when nothing happened). */
export function awayText(w: HostAway | undefined | null): string {
  if (!w) return ''
  const parts: string[] = []
  if (w.engineRestarted) parts.push('its engine had ended and was started again')
  const agents = w.agents ?? []
  const ended = agents.filter((a) => a.ended > 0).length
  const attention = agents.filter((a) => a.attention).length
  if (ended) parts.push(`${ended} agent${ended === 1 ? '' : 's'} ended`)
  if (attention) parts.push(`${attention} need${attention === 1 ? 's' : ''} you`)
  const other = agents.length - agents.filter((a) => a.ended > 0 || a.attention).length
  if (other) parts.push(`${other} other change${other === 1 ? '' : 's'}`)
  return parts.join(', ')
}
