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
