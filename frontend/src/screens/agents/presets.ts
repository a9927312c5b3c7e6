import {joinArgs} from '../../lib/args'
import {UNSANDBOXED, type SandboxValues} from '../../lib/sandbox'
import {NO_WORKTREE, type WorktreeValues} from './WorktreeFields'

export interface FormValues extends SandboxValues, WorktreeValues {
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
  /** Claude Code and Codex: the task (Claude: after `--`; Codex: the last argument). */
  prompt: string
  /** Claude Code `--model X`, Codex `-m X`; optional. */
  model: string
  /** Claude Code: give it Shepherd's MCP server (`--mcp-config`). */
  mcp: boolean
  /** The `--mcp-config` value the agent had, kept if a fresh one cannot be had. */
  mcpValue: string
  /** The silence check (default on) and what a silent agent gets ('' the profile's default). */
  staleCheck: boolean
  onStale: string
  /** Budgets per run, as typed ('' or 0: none). */
  maxBudgetUsd?: string
  maxTurns?: string
}

export const EMPTY: FormValues = {
  id: '', name: '', command: '', args: '', cwd: '', profile: 'generic', resumeArgs: '',
  env: [], timeoutSec: '0', graceSec: '10', keepAlive: false, autoStartOnRestore: false, prompt: '', model: '',
  mcp: false, mcpValue: '', staleCheck: true, onStale: '', ...UNSANDBOXED, ...NO_WORKTREE,
}

export const CLAUDE_INSTALL = 'npm install -g @anthropic-ai/claude-code'
export const CODEX_INSTALL = 'npm install -g @openai/codex'
/** How to install a known agent CLI that is not on the PATH. */
export const INSTALL: Record<string, string> = {claude: CLAUDE_INSTALL, codex: CODEX_INSTALL}

export const CLAUDE = 'claude-stream-json'
export const CODEX = 'codex-json'
export const PROFILES = ['generic', CLAUDE, CODEX] as const

/** Does this profile take a prompt and a model of its own (Claude Code, Codex)? */
export const takesPrompt = (profile: string) => profile === CLAUDE || profile === CODEX

export const MCP_FLAG = '--mcp-config'
const modelFlag = (profile: string) => (profile === CODEX ? '-m' : '--model')

/**
 * args + the model + the prompt, as the CLI wants them: Claude Code
 * `… [--mcp-config V] [--model X] -- PROMPT`; Codex `exec --json … [-m X] PROMPT`
 * (what `shepherd create --preset` makes).
 */
export function withPrompt(profile: string, args: string[], prompt: string, model: string, mcp = ''): string[] {
  const out = args.slice()
  if (profile === CLAUDE && mcp) out.push(MCP_FLAG, mcp)
  if (model.trim()) out.push(modelFlag(profile), model.trim())
  if (prompt.trim()) out.push(...(profile === CODEX ? [prompt] : ['--', prompt]))
  return out
}

/** Inserts flag and value before `at` (Claude: `--`; Codex: `resume`), or at the end. */
function insertBefore(args: string[], at: string, flag: string, value: string): string[] {
  const i = args.indexOf(at)
  const j = i < 0 ? args.length : i
  return [...args.slice(0, j), flag, value, ...args.slice(j)]
}

/** The resume arguments with the same model (and Shepherd's tools), placed before the prompt. */
export function withModel(profile: string, resumeArgs: string[], model: string, mcp = ''): string[] {
  const at = profile === CODEX ? 'resume' : '--'
  let out = resumeArgs
  if (profile === CLAUDE && mcp && !out.includes(MCP_FLAG)) out = insertBefore(out, at, MCP_FLAG, mcp)
  const hasModel = out.includes(modelFlag(profile)) || (profile === CODEX && out.includes('--model'))
  if (model.trim() && !hasModel) out = insertBefore(out, at, modelFlag(profile), model.trim())
  return out
}

/** Takes `flag value` out of args: the rest and the value ('' when absent). */
function take(args: string[], flag: string): string {
  const i = args.indexOf(flag)
  if (i < 0 || i + 1 >= args.length) return ''
  const [, value] = args.splice(i, 2)
  return value
}

/** The reverse of withPrompt: the prompt, the model and Shepherd's tools taken out of the arguments. */
export function splitPrompt(profile: string, args: readonly string[]): {args: string[]; prompt: string; model: string; mcp: string} {
  let rest = args.slice()
  let prompt = ''
  if (profile === CODEX) {
    const model = take(rest, '-m') || take(rest, '--model')
    const last = rest.length - 1
    // The prompt is the last argument, unless that is an option or the subcommand.
    if (last > 0 && !rest[last].startsWith('-') && rest[last] !== 'exec') prompt = rest.pop()!
    return {args: rest, prompt, model, mcp: ''}
  }
  const dd = rest.indexOf('--')
  if (dd >= 0) {
    prompt = rest.slice(dd + 1).join(' ')
    rest = rest.slice(0, dd)
  }
  const mcp = take(rest, MCP_FLAG)
  const model = take(rest, '--model')
  return {args: rest, prompt, model, mcp}
}

/** The resume arguments without what withModel put there. */
export function withoutModel(profile: string, resumeArgs: readonly string[], model: string): string[] {
  const out = resumeArgs.slice()
  if (profile === CLAUDE) take(out, MCP_FLAG)
  const i = out.indexOf(modelFlag(profile))
  if (model && i >= 0 && out[i + 1] === model) out.splice(i, 2)
  return out
}

export interface Preset {
  id: string
  label: string
  values: Partial<FormValues>
}

/** Claude Code and Codex run headless with their JSON output, resumable by session id (backend/presets). */
export const PRESETS: Preset[] = [
  {
    id: 'claude',
    label: 'Claude Code',
    values: {
      command: 'claude',
      args: joinArgs(['-p', '--verbose', '--output-format', 'stream-json']),
      profile: CLAUDE,
      resumeArgs: joinArgs(['-p', '--verbose', '--output-format', 'stream-json', '--resume', '{sessionId}', '--', 'continue']),
    },
  },
  {
    id: 'codex',
    label: 'Codex',
    values: {
      command: 'codex',
      args: joinArgs(['exec', '--json']),
      profile: CODEX,
      resumeArgs: joinArgs(['exec', '--json', 'resume', '{sessionId}', 'continue']),
      mcp: false,
    },
  },
  {id: 'custom', label: 'Custom command', values: {command: '', args: '', profile: 'generic', resumeArgs: '', mcp: false}},
]

export const presetValues = (id: string) => PRESETS.find((p) => p.id === id)!.values

/** Which field an engine validation message is about ('' for the form as a whole). */
export function fieldOf(message: string): keyof FormValues | '' {
  const m = message.toLowerCase()
  if (m.includes('permission')) return 'writeDirs' // names the tag: shown in the sandbox section
  if (m.includes('base "') || m.includes('git repository') || m.includes('worktree')) return 'base'
  if (m.includes('already exists')) return 'id'
  if (m.includes('command')) return 'command'
  if (m.includes('cwd')) return 'cwd'
  if (m.includes('environment')) return 'env'
  if (m.includes('gracesec')) return 'graceSec'
  if (m.includes('maxbudgetusd')) return 'maxBudgetUsd'
  if (m.includes('maxturns')) return 'maxTurns'
  if (m.includes('timeoutsec')) return 'timeoutSec'
  if (m.includes('profile')) return 'profile'
  if (m.includes('resume')) return 'resumeArgs'
  if (m.includes('model')) return 'model'
  if (/\bid\b/.test(m)) return 'id'
  return ''
}
