import {useEffect, useState} from 'react'
import {getVersion} from '../../api'

type VersionState = {kind: 'loading'} | {kind: 'ok'; version: string} | {kind: 'error'}

/** The placeholder screen shown until the agents UI exists. */
export function Welcome() {
  const [version, setVersion] = useState<VersionState>({kind: 'loading'})

  useEffect(() => {
    let live = true
    getVersion().then(
      (v) => live && setVersion({kind: 'ok', version: v}),
      () => live && setVersion({kind: 'error'}),
    )
    return () => {
      live = false
    }
  }, [])

  return (
    <main className="welcome">
      <h1>Shepherd</h1>
      <p>
        Shepherd supervises long-running AI coding agents — Claude Code, Codex, aider or any
        command: it starts them, keeps their logs, notices when they finish, die or hang, and
        brings interrupted sessions back.
      </p>
      <p>The agents view comes next.</p>
      <p className="version" aria-label="version">
        {version.kind === 'loading' && 'Version …'}
        {version.kind === 'ok' && `Version ${version.version}`}
        {version.kind === 'error' && 'Version unknown'}
      </p>
    </main>
  )
}
