import {useState} from 'react'
import {useQueryClient} from '@tanstack/react-query'
import {toast} from 'sonner'
import type {Agent} from '../../api'
import {api, errorMessage} from '../../api'
import {canReply} from '../../lib/answers'
import {upsertAgent} from '../../state/queries'

/**
 * Under the conversation of a Claude Code or Codex agent whose run ended: a
 * message resumes its session with it as the prompt (through the queue).
 * Ctrl+Enter sends.
 */
export function ReplyBox({agent: a}: {agent: Agent}) {
  const [text, setText] = useState('')
  const [busy, setBusy] = useState(false)
  const qc = useQueryClient()
  const why = canReply(a)
  if (why === 'hidden') return null
  const send = async () => {
    if (!text.trim() || busy || why) return
    setBusy(true)
    try {
      const rec = await api.agents.send(a.projectId, a.id, text)
      upsertAgent(qc, rec)
      setText('')
      if (rec.status === 'queued') toast.info(`${a.id} resumes with your message when a slot frees`)
    } catch (err) {
      toast.error(`Cannot send ${a.id} your message`, {description: errorMessage(err)})
    }
    setBusy(false)
  }
  return (
    <form className="reply-box" aria-label="Reply" onSubmit={(e) => {
      e.preventDefault()
      void send()
    }}>
      <textarea aria-label={`Message to ${a.id}`} value={text} disabled={busy || !!why} rows={2}
        placeholder={why || `Reply to ${a.id}: it resumes its session with your message (Ctrl+Enter sends)`}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
            e.preventDefault()
            void send()
          }
        }}/>
      <button type="submit" className="primary" disabled={busy || !!why || !text.trim()}>Send</button>
    </form>
  )
}
