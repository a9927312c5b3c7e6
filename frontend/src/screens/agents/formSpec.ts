// The agent form's values to the engine's spec and back.
import type {Agent, AgentSpec} from '../../api'
import {joinArgs, splitArgs} from '../../lib/args'
import {tagsOf, valuesOfGrants} from '../../lib/sandbox'
import {canResumeOnStale} from './SilenceFields'
import {CLAUDE, splitPrompt, takesPrompt, withModel, withoutModel, withPrompt, type FormValues} from './presets'

export function valuesOf(a: Agent): FormValues {
  const profile = a.profile || 'generic'
  const split = takesPrompt(profile) ? splitPrompt(profile, a.args ?? []) : {args: a.args ?? [], prompt: '', model: '', mcp: ''}
  return {
    id: a.id, name: a.name ?? '', command: a.command, args: joinArgs(split.args), cwd: a.cwd,
    profile, resumeArgs: joinArgs(withoutModel(profile, a.resumeArgs ?? [], split.model)),
    env: Object.entries(a.env ?? {}).map(([key, value]) => ({key, value})),
    timeoutSec: String(a.timeoutSec), graceSec: String(a.graceSec),
    keepAlive: a.keepAlive, autoStartOnRestore: a.autoStartOnRestore, prompt: split.prompt, model: split.model,
    mcp: !!split.mcp, mcpValue: split.mcp, staleCheck: a.staleCheck ?? true, onStale: a.onStale ?? '',
    maxBudgetUsd: a.maxBudgetUsd ? String(a.maxBudgetUsd) : '', maxTurns: a.maxTurns ? String(a.maxTurns) : '',
    ...valuesOfGrants(a.sandbox),
    worktree: !!a.workspace?.worktree, base: a.workspace?.base ?? '',
  }
}

/**
 * The spec sent to the engine; numbers that are not whole numbers are left
 * for the engine to refuse. mcpConfig is Shepherd's current `--mcp-config`
 * value, used when the box for its tools is ticked (else the agent's own).
 */
export function specOf(v: FormValues, mcpConfig = ''): AgentSpec {
  const env: Record<string, string> = {}
  for (const r of v.env) if (r.key.trim() || r.value) env[r.key.trim()] = r.value
  const prompted = takesPrompt(v.profile)
  const mcp = v.profile === CLAUDE && v.mcp ? mcpConfig || v.mcpValue : ''
  const args = prompted ? withPrompt(v.profile, splitArgs(v.args), v.prompt, v.model, mcp) : splitArgs(v.args)
  const resumeArgs = prompted ? withModel(v.profile, splitArgs(v.resumeArgs), v.model, mcp) : splitArgs(v.resumeArgs)
  return {
    id: v.id.trim(), name: v.name.trim() || undefined, command: v.command.trim(), args,
    cwd: v.cwd.trim() || undefined, profile: v.profile, resumeArgs, env,
    timeoutSec: Number(v.timeoutSec || 0), graceSec: Number(v.graceSec || 0),
    keepAlive: v.keepAlive, autoStartOnRestore: v.autoStartOnRestore,
    permissions: tagsOf(v),
    staleCheck: v.staleCheck,
    // resume where the profile has no session to resume is the default instead (flag)
    onStale: v.onStale === 'resume' && !canResumeOnStale(v.profile) ? '' : v.onStale,
    maxBudgetUsd: Number(v.maxBudgetUsd?.trim().replace(/^\$/, '') || 0), maxTurns: Number(v.maxTurns?.trim() || 0),
    workspace: v.worktree ? {worktree: true, base: v.base.trim() || undefined} : undefined,
  }
}

export type FormErrors = Partial<Record<keyof FormValues | 'form', string>>

/** Checks the form can be sent at all; everything else is the engine's to judge. */
export function localErrors(v: FormValues, mcpConfig = ''): FormErrors {
  const e: FormErrors = {}
  if (!/^-?\d+$/.test(v.timeoutSec.trim() || '0')) e.timeoutSec = 'a whole number of seconds (0: none)'
  if (!/^-?\d+$/.test(v.graceSec.trim() || '0')) e.graceSec = 'a whole number of seconds'
  if (!/^\$?\d*\.?\d*$/.test(v.maxBudgetUsd?.trim() ?? '')) e.maxBudgetUsd = 'maxBudgetUsd: an amount of dollars, e.g. 5 or 2.50 (empty: no limit)'
  if (!/^\d*$/.test(v.maxTurns?.trim() ?? '')) e.maxTurns = 'maxTurns: a whole number of turns (empty: no limit)'
  if (v.profile === CLAUDE && v.mcp && !mcpConfig && !v.mcpValue) e.mcp = 'Shepherd could not say how to reach its MCP server; untick the box to create the agent without it'
  return e
}
