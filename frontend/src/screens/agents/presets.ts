import {joinArgs} from '../../lib/args'

export interface FormValues {
  id: string
  name: string
  command: string
  args: string
  cwd: string
  profile: string
  resumeArgs: string
  env: {key: string; value: string}[]
  timeoutSec: string
  graceSec: string
  keepAlive: boolean
  autoStartOnRestore: boolean
}

export const EMPTY: FormValues = {
  id: '', name: '', command: '', args: '', cwd: '', profile: 'generic', resumeArgs: '',
  env: [], timeoutSec: '0', graceSec: '10', keepAlive: false, autoStartOnRestore: false,
}

export interface Preset {
  id: string
  label: string
  values: Partial<FormValues>
}

/** Claude Code run headless with its stream-json output, resumable by session id (SPEC). */
export const PRESETS: Preset[] = [
  {
    id: 'claude',
    label: 'Claude Code',
    values: {
      command: 'claude',
      args: joinArgs(['-p', '--verbose', '--output-format', 'stream-json']),
      profile: 'claude-stream-json',
      resumeArgs: joinArgs(['-p', '--verbose', '--output-format', 'stream-json', '--resume', '{sessionId}', '--', 'continue']),
    },
  },
  {id: 'custom', label: 'Custom command', values: {command: '', args: '', profile: 'generic', resumeArgs: ''}},
]

/** Which field an engine validation message is about ('' for the form as a whole). */
export function fieldOf(message: string): keyof FormValues | '' {
  const m = message.toLowerCase()
  if (m.includes('already exists')) return 'id'
  if (m.includes('command')) return 'command'
  if (m.includes('cwd')) return 'cwd'
  if (m.includes('environment')) return 'env'
  if (m.includes('gracesec')) return 'graceSec'
  if (m.includes('timeoutsec')) return 'timeoutSec'
  if (m.includes('profile')) return 'profile'
  if (m.includes('resume')) return 'resumeArgs'
  if (/\bid\b/.test(m)) return 'id'
  return ''
}
