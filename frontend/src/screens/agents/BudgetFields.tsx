import {budgetFlags} from '../../lib/budget'
import {joinArgs} from '../../lib/args'
import type {FormValues} from './presets'

interface Props {
  values: FormValues
  onChange: (patch: Partial<FormValues>) => void
  errors: Partial<Record<'maxBudgetUsd' | 'maxTurns', string>>
}

/** The agent's budget per run: what one run may cost and how many turns it may take, and what reaching one does. */
export function BudgetFields({values: v, onChange, errors}: Props) {
  const usd = Number(v.maxBudgetUsd?.trim().replace(/^\$/, '') || 0)
  const turns = Number(v.maxTurns?.trim() || 0)
  const flags = budgetFlags(v.profile, Number.isFinite(usd) ? usd : 0, Number.isFinite(turns) ? turns : 0)
  const err = (k: 'maxBudgetUsd' | 'maxTurns') => errors[k] && <span className="field-error" role="alert">{errors[k]}</span>
  return (
    <fieldset className="budget-fields">
      <legend>Budget per run</legend>
      <div className="grid2">
        <label>Max cost ($, empty = none)
          <input name="maxBudgetUsd" inputMode="decimal" placeholder="no limit" value={v.maxBudgetUsd ?? ''}
            aria-invalid={!!errors.maxBudgetUsd || undefined} onChange={(e) => onChange({maxBudgetUsd: e.target.value})}/>
          {err('maxBudgetUsd')}
        </label>
        <label>Max turns (empty = none)
          <input name="maxTurns" inputMode="numeric" placeholder="no limit" value={v.maxTurns ?? ''}
            aria-invalid={!!errors.maxTurns || undefined} onChange={(e) => onChange({maxTurns: e.target.value})}/>
          {err('maxTurns')}
        </label>
      </div>
      <span className="hint muted" data-budget-hint>
        A run that reaches one is paused and you are asked: raise it, resume once, or stop.
        {flags.length > 0 && <> Claude Code is started with <code>{joinArgs(flags)}</code> added (not stored in its arguments).</>}
        {v.profile === 'generic' && (usd > 0 || turns > 0) && ' A generic command reports no cost or turns: this applies only to Claude Code and Codex.'}
      </span>
    </fieldset>
  )
}
