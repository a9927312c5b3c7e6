import {useEffect, useRef} from 'react'
import {toast} from 'sonner'
import {api, errorMessage, type Agent} from '../../api'
import {anyDialogOpen} from '../../components/Dialog'
import {attentionReason, stoppable} from '../../lib/groups'
import {useUI} from '../../state/ui'

const typing = (t: EventTarget | null) =>
  !!(t as HTMLElement | null)?.closest?.('input, textarea, select, [contenteditable="true"]')

/**
 * The list's keys, wherever the focus is: ↑/↓ move (and take the focus to
 * the row), Enter opens, Esc closes the detail, `s` starts or stops, `a`
 * acknowledges what it needs of the user, `/` focuses the filter, Ctrl+F the
 * log search of the open detail (so "/" has one owner). Nothing while a
 * dialog is open or a field is typed in; in the list itself, its own keys
 * (the treegrid's) come first.
 */
export function useListKeys(order: readonly string[], agents: readonly Agent[], onRecord?: (a: Agent) => void) {
  const latest = useRef({order, agents, onRecord})
  latest.current = {order, agents, onRecord}
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const ui = useUI.getState()
      if (ui.dialog || anyDialogOpen() || e.defaultPrevented) return
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'f') {
        const box = document.querySelector<HTMLInputElement>('[data-search="log"]')
        if (box) {
          e.preventDefault()
          box.focus()
          box.select()
        }
        return
      }
      if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return
      const {order, agents} = latest.current
      // On a group's line of the list, `s` and `a` name no agent.
      if ((e.key === 's' || e.key.toLowerCase() === 'a') && (e.target as HTMLElement | null)?.closest?.('[data-group-row]')) return
      const current = ui.cursorId ?? ui.agentId
      const move = (d: number) => {
        if (!order.length) return
        const i = current ? order.indexOf(current) : -1
        const next = order[i < 0 ? (d > 0 ? 0 : order.length - 1) : Math.min(order.length - 1, Math.max(0, i + d))]
        if (ui.agentId) ui.selectAgent(next)
        else ui.setCursor(next)
        document.querySelector<HTMLElement>(`tr[data-agent="${CSS.escape(next)}"]`)?.focus()
      }
      switch (e.key) {
        case 'ArrowDown':
        case 'ArrowUp':
          if ((e.target as HTMLElement | null)?.closest?.('[role="menu"], [role="log"], .stream')) return
          e.preventDefault()
          move(e.key === 'ArrowDown' ? 1 : -1)
          return
        case 'Enter':
          if ((e.target as HTMLElement | null)?.closest?.('button, a')) return
          if (current) {
            e.preventDefault()
            ui.selectAgent(current)
          }
          return
        case 'Escape':
          if (ui.feedOpen) ui.setFeedOpen(false)
          else if (ui.agentId) ui.selectAgent(null)
          return
        case '/': {
          const box = document.querySelector<HTMLInputElement>('[data-search="agents"]')
          if (box) {
            e.preventDefault()
            box.focus()
          }
          return
        }
        case 'a':
        case 'A': {
          const a = agents.find((x) => x.id === current)
          if (!a || !attentionReason(a)) return
          e.preventDefault()
          api.agents.ack(a.projectId, a.id).then((rec) => latest.current.onRecord?.(rec),
            (err: unknown) => toast.error(`Cannot acknowledge ${a.id}`, {description: errorMessage(err)}))
          return
        }
        case 's': {
          const a = agents.find((x) => x.id === current)
          if (!a) return
          e.preventDefault()
          const stop = stoppable(a)
          const call = stop ? api.agents.stop(a.projectId, a.id) : api.agents.start(a.projectId, a.id)
          call.catch((err: unknown) => toast.error(`Cannot ${stop ? 'stop' : 'start'} ${a.id}`, {description: errorMessage(err)}))
        }
      }
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [])
}
