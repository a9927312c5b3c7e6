import {useEffect, useState, type ReactNode} from 'react'
import {api} from '../../api'
import {INSTALL} from './presets'

/** How long typing rests before the command is looked up: a warning never comes and goes while one types. */
export const LOOKUP_REST_MS = 900

/**
 * Warns (never refuses) when the command is not found on the engine's PATH:
 * it may be set later. Looked up once typing rests (or the field is left),
 * so the warning does not appear and vanish with each letter, moving the
 * fields under the pointer.
 */
function useMissingCommand(command: string, cwd: string, typing: boolean): string {
  const [missing, setMissing] = useState('')
  const cmd = command.trim()
  useEffect(() => {
    if (!cmd || !api.agents.lookPath) {
      setMissing('')
      return
    }
    let live = true
    const t = setTimeout(() => {
      api.agents.lookPath(cmd, cwd).then(() => live && setMissing(''), () => live && setMissing(cmd))
    }, typing ? LOOKUP_REST_MS : 0)
    return () => {
      live = false
      clearTimeout(t)
    }
  }, [cmd, cwd, typing])
  return missing
}

interface Props {
  input: ReactNode
  error: ReactNode
  command: string
  cwd: string
}

/** The command's input, its error, and a warning with the way to install a known CLI when it is not on the PATH. */
export function CommandField({input, error, command, cwd}: Props) {
  const [typing, setTyping] = useState(false) // typed into, not left yet: looked up once typing rests
  const missing = useMissingCommand(command, cwd, typing)
  const install = INSTALL[missing]
  return (
    <label onBlur={() => setTyping(false)} onInput={() => setTyping(true)}>Command{input}{error}
      {missing && (
        <span className="field-warn" role="status">
          <strong>{missing}</strong> is not on the PATH Shepherd was started with.{' '}
          {install ? <>Install it with <code>{install}</code>, or give its full path.</> : 'Give its full path, or install it.'}
          {' '}You can still create the agent; it starts once the command can be found.
        </span>
      )}
    </label>
  )
}
