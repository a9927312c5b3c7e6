import {useMemo} from 'react'
import {duration} from '../../lib/time'
import {parseStream, type StreamItem} from './streamJson'

const SHOWN = 400

function Item({item}: {item: StreamItem}) {
  switch (item.kind) {
    case 'init':
      return <div className="st-init">Session <code>{item.sessionId}</code>{item.model && <> · {item.model}</>}</div>
    case 'text':
      return <div className={`st-text st-${item.role}`}>{item.text}</div>
    case 'tool':
      return <div className="st-tool"><span className="st-tool-name">⚙ {item.name}</span> <code>{item.input}</code></div>
    case 'toolResult':
      return <div className={item.isError ? 'st-tool-result bad' : 'st-tool-result'}>{item.text.slice(0, 2000)}</div>
    case 'result':
      return (
        <div className={item.ok ? 'st-result ok' : 'st-result bad'} role="status">
          <strong>{item.ok ? '✔ Finished' : `✖ Ended with ${item.subtype || 'an error'}`}</strong>
          {item.turns !== undefined && <span>{item.turns} turns</span>}
          {item.durationMs !== undefined && <span>{duration(item.durationMs)}</span>}
          {item.costUsd !== undefined && <span>${item.costUsd.toFixed(4)}</span>}
          {item.sessionId && <span>session <code>{item.sessionId}</code></span>}
          {item.text && <div className="st-result-text">{item.text}</div>}
        </div>
      )
    case 'raw':
      return <div className="st-raw">{item.text}</div>
  }
}

/** Claude Code's stream-json log as a conversation: assistant text, tool calls and the result line. */
export function StreamView({lines}: {lines: readonly string[]}) {
  const items = useMemo(() => parseStream(lines.slice(-SHOWN * 2)).slice(-SHOWN), [lines])
  if (items.length === 0) return <p className="muted">Nothing in the log yet.</p>
  return (
    <div className="stream" aria-label="Conversation">
      {items.length >= SHOWN && <p className="muted">The last {SHOWN} entries; Raw shows the whole log.</p>}
      {items.map((it, i) => <Item key={i} item={it}/>)}
    </div>
  )
}
