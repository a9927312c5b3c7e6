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
  /** Claude Code: the task, passed after `--`. */
  prompt: string
  /** Claude Code: `--model X`, optional. */
  model: string
}

export const EMPTY: FormValues = {
  id: '', name: '', command: '', args: '', cwd: '', profile: 'generic', resumeArgs: '',
  env: [], timeoutSec: '0', graceSec: '10', keepAlive: false, autoStartOnRestore: false, prompt: '', model: '',
}

export const CLAUDE_INSTALL = 'npm install -g @anthropic-ai/claude-code'

/** Does this profile take a prompt and a model of its own (Claude Code)? */
export const takesPrompt = (profile: string) => profile === 'claude-stream-json'

/** args + `--model X` + `-- PROMPT`, as Claude Code's command line wants them. */
export function withPrompt(args: string[], prompt: string, model: string): string[] {
  const out = args.slice()
  if (model.trim()) out.push('--model', model.trim())
  if (prompt.trim()) out.push('--', prompt)
  return out
}

/** The resume arguments with the same model, placed before any `--`. */
export function withModel(resumeArgs: string[], model: string): string[] {
  if (!model.trim() || resumeArgs.includes('--model')) return resumeArgs
  const i = resumeArgs.indexOf('--')
  const at = i < 0 ? resumeArgs.length : i
  return [...resumeArgs.slice(0, at), '--model', model.trim(), ...resumeArgs.slice(at)]
}

/** The reverse of withPrompt: the prompt after `--` and the model taken out of the arguments. */
export function splitPrompt(args: readonly string[]): {args: string[]; prompt: string; model: string} {
  let rest = args.slice()
  let prompt = ''
  const dd = rest.indexOf('--')
  if (dd >= 0) {
    prompt = rest.slice(dd + 1).join(' ')
    rest = rest.slice(0, dd)
  }
  let model = ''
  const m = rest.indexOf('--model')
  if (m >= 0 && m + 1 < rest.length) {
    model = rest[m + 1]
    rest.splice(m, 2)
  }
  return {args: rest, prompt, model}
}

/** The resume arguments without the model withModel put there. */
export function withoutModel(resumeArgs: readonly string[], model: string): string[] {
  const i = resumeArgs.indexOf('--model')
  if (!model || i < 0 || resumeArgs[i + 1] !== model) return resumeArgs.slice()
  return [...resumeArgs.slice(0, i), ...resumeArgs.slice(i + 2)]
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
  if (m.includes('model')) return 'model'
  if (/\bid\b/.test(m)) return 'id'
  return ''
}
