import type {Agent} from '../../api'
import {attentionReason} from '../../lib/groups'
import {waitingView} from '../../lib/status'
import {useAcknowledge} from '../agents/AgentActions'
import {useNow} from '../agents/AgentList'

/**
 * What the agent needs (with its start error, when that is why) of the user, under the detail's header, with
 * Acknowledge; or, calmly, that it waits for a rate limit to pass.
 */
export function AttentionLine({agent: a, error}: {agent: Agent; error?: string}) {
  const now = useNow(true)
  const ack = useAcknowledge()
  const why = attentionReason(a, now)
  const waiting = waitingView(a, now)
  // A budget pause has its own panel, with its answers.
  if (why && !(a.budgetPause && a.status === 'paused')) {
    return (
      <p className="attention-line needs-you" data-attention-line role={error ? 'alert' : undefined}>
        <span title={`${why}${error ? ` — ${error}` : ''}`}><strong>Needs you:</strong> {why}{error && <span className="start-error"> — {error}</span>}</span>
        <button type="button" data-op="ack" onClick={() => void ack(a)}
          title="Seen it: take it out of Needs you until it needs you again; its history is kept (A)">Acknowledge</button>
      </p>
    )
  }
  if (waiting && !waiting.needsYou) {
    return (
      <p className="attention-line calm" data-attention-line title={waiting.title}>
        <span>{waiting.text}</span>
        <span className="muted">not hung: it goes on by itself</span>
      </p>
    )
  }
  return null
}
