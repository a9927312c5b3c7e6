import {useUI} from '../../state/ui'
import {EngineIndicator} from '../engine/Engine'

/** First launch: what Shepherd does and the one thing to do. */
export function EmptyState() {
  const open = useUI((s) => s.open)
  return (
    <main className="empty">
      <h1>Welcome to Shepherd</h1>
      <p>
        Shepherd runs and watches long-running AI coding agents — Claude Code, Codex, aider or any
        command — for the folders you work in. It keeps their logs, tells you at once when they finish,
        fail or hang, keeps them running when this window closes, and resumes interrupted sessions.
      </p>
      <p>Start by adding a project: the folder your agents work in.</p>
      <button type="button" className="primary big" onClick={() => open({kind: 'addProject'})}>
        Add project
      </button>
      <div className="empty-engine"><EngineIndicator/></div>
    </main>
  )
}
