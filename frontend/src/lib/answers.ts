// What an agent asks through Shepherd's permission tool (SPEC "Answers"),
// as the window words it. Pure: tested on its own.
import type {Agent, Asked} from '../api'
import {attentionReason} from './groups'

const PERMISSION = 'waiting: permission for '
const CHOICE = 'waiting: your choice'

/** The agent waits on a question Shepherd can answer: 'permission', 'choice', or ''. */
export function asking(a: Agent): 'permission' | 'choice' | '' {
  const why = attentionReason(a)
  if (why.startsWith(PERMISSION)) return 'permission'
  if (why === CHOICE) return 'choice'
  return ''
}

/** What the agent asks permission for ("Bash: rm -rf build/"), from its attention. */
export function askedFor(a: Agent): string {
  const why = attentionReason(a)
  return why.startsWith(PERMISSION) ? why.slice(PERMISSION.length) : ''
}

/** The rule "Always allow" offers: the narrowest suggestion, or the tool's name. */
export function suggestedRule(q: Asked): string {
  return q.suggestions?.[0] ?? ''
}

/** Why a rule cannot be kept as typed ('' when it can be sent; the engine checks the rest). */
export function ruleProblem(rule: string): string {
  const r = rule.trim()
  if (!r) return 'Type a rule, e.g. Bash(npm test:*)'
  const open = r.indexOf('(')
  if (open === 0) return 'A rule starts with a tool name, e.g. Bash(npm test:*)'
  if (open > 0 && !r.endsWith(')')) return 'The rule has no closing parenthesis'
  return ''
}

/** The answers of an AskUserQuestion, one per question: what is missing, or '' when every question is answered. */
export function missingAnswer(q: Asked, answers: Record<string, string>): string {
  for (const qq of q.questions ?? []) {
    if (!(answers[qq.question] ?? '').trim()) return qq.question
  }
  return ''
}

/** A multiSelect question's answer: the labels chosen, joined as the engine reads them. */
export function toggleChoice(current: string, label: string): string {
  const set = current.split(',').map((s) => s.trim()).filter(Boolean)
  const i = set.indexOf(label)
  if (i >= 0) set.splice(i, 1)
  else set.push(label)
  return set.join(', ')
}

/** "denied after 5 min" / "waits for the answer". */
export function policyText(min: number): string {
  return min > 0 ? `denied after ${min} min without an answer` : 'waits for your answer'
}

const LIVE = new Set(['spawning', 'running', 'stopping', 'killing', 'timed_out', 'queued'])

/**
 * Whether the agent can be sent a message now: '' (yes), why not in words
 * (shown in the box), or 'hidden' (not a Claude Code or Codex agent, or one
 * that cannot resume a session).
 */
export function canReply(a: Agent): string {
  if (a.profile !== 'claude-stream-json' && a.profile !== 'codex-json') return 'hidden'
  if (!(a.resumeArgs?.length)) return 'hidden'
  if (LIVE.has(a.status)) return a.status === 'queued' ? 'It is queued: reply once its run ended' : 'It is running: reply once its run ended'
  if (a.status === 'paused') return 'It is paused: resume it, or reply once it ended'
  if (a.status === 'not_started') return 'Start it first: a reply resumes its session'
  if (!a.sessionId && a.resumeArgs.some((x) => x.includes('{sessionId}'))) return 'No session to resume yet'
  return ''
}

/** A window of an account's subscription, as the engine reports it. */
export interface UsageWindow {
  name: string
  status?: string
  resetsAt: string
  utilization: number
}

const WINDOW_LABELS: Record<string, string> = {
  five_hour: '5-hour', seven_day: 'weekly', seven_day_opus: 'weekly Opus', seven_day_sonnet: 'weekly Sonnet',
}

/** "5-hour: 82 % · resets 14:00" — '' for a window with nothing to say (unknown use, no reset). */
export function windowText(w: UsageWindow, now = Date.now()): string {
  const label = WINDOW_LABELS[w.name] ?? w.name.replace(/_/g, ' ')
  const parts: string[] = []
  if (w.status === 'rejected') parts.push('used up')
  else if (w.utilization >= 0) parts.push(`${Math.round(w.utilization * 100)} %`)
  const t = Date.parse(w.resetsAt)
  if (Number.isFinite(t) && t > now && t > 0) {
    const d = new Date(t)
    const sameDay = new Date(now).toDateString() === d.toDateString()
    const hm = d.toLocaleTimeString([], {hour: '2-digit', minute: '2-digit', hour12: false})
    parts.push(`resets ${sameDay ? hm : `${d.toLocaleDateString([], {month: 'short', day: 'numeric'})} ${hm}`}`)
  }
  if (parts.length === 0 || (parts.length === 1 && w.utilization === 0 && w.status !== 'rejected')) return ''
  return `${label}: ${parts.join(' · ')}`
}
