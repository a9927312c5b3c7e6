import {useEffect, useState} from 'react'
import {type EngineStatus, getEngine, getVersion} from '../../api'

type Loaded<T> = {kind: 'loading'} | {kind: 'ok'; value: T} | {kind: 'error'; message: string}

function useLoaded<T>(load: () => Promise<T>): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({kind: 'loading'})
  useEffect(() => {
    let live = true
    load().then(
      (value) => live && setState({kind: 'ok', value}),
      (err: unknown) => live && setState({kind: 'error', message: String(err)}),
    )
    return () => {
      live = false
    }
  }, [load])
  return state
}

/** The placeholder screen shown until the agents UI exists. */
export function Welcome() {
  const version = useLoaded(getVersion)
  const engine = useLoaded<EngineStatus>(getEngine)

  return (
    <main className="welcome">
      <h1>Shepherd</h1>
      <p>
        Shepherd supervises long-running AI coding agents — Claude Code, Codex, aider or any
        command: it starts them, keeps their logs, notices when they finish, die or hang, and
        brings interrupted sessions back.
      </p>
      <p>The agents view comes next.</p>
      <p className="engine" aria-label="engine">
        {engine.kind === 'loading' && 'Engine …'}
        {engine.kind === 'ok' &&
          `Engine running (pid ${engine.value.pid}) at ${engine.value.url}; the shepherd command line reaches it.`}
        {engine.kind === 'error' && `Engine not running: ${engine.message}`}
      </p>
      <p className="version" aria-label="version">
        {version.kind === 'loading' && 'Version …'}
        {version.kind === 'ok' && `Version ${version.value}`}
        {version.kind === 'error' && 'Version unknown'}
      </p>
    </main>
  )
}
