import {useEffect, useState, type ReactNode} from 'react'
import {api} from '../../api'
import {INSTALL} from './presets'

/** Warns (never refuses) when the command is not found on the engine's PATH: it may be set later. */
function useMissingCommand(command: string, cwd: string): string {
  const [missing, setMissing] = useState('')
  useEffect(() => {
    const cmd = command.trim()
    if (!cmd || !api.agents.lookPath) {
      setMissing('')
      return
    }
    let live = true
    const t = setTimeout(() => {
      api.agents.lookPath(cmd, cwd).then(() => live && setMissing(''), () => live && setMissing(cmd))
    }, 250)
    return () => {
      live = false
      clearTimeout(t)
    }
  }, [command, cwd])
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
  const missing = useMissingCommand(command, cwd)
  const install = INSTALL[missing]
  return (
    <label>Command{input}{error}
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
