import {useState} from 'react'

/** The project's daily budget in dollars, typed as text so that "2.50" can be typed; 0 or empty: no limit. */
export function DailyBudgetField({value, onChange}: {value: number; onChange: (usd: number) => void}) {
  const [text, setText] = useState(value ? String(value) : '')
  const bad = text.trim() !== '' && !/^\$?\d*\.?\d*$/.test(text.trim())
  return (
    <label className="setting">
      <span className="setting-label">Daily budget</span>
      <span className="setting-input">
        <span className="muted">$</span>
        <input name="dailyBudgetUsd" inputMode="decimal" placeholder="no limit" value={text} aria-invalid={bad || undefined}
          aria-describedby="help-dailyBudgetUsd" onChange={(e) => {
            setText(e.target.value)
            const n = Number(e.target.value.trim().replace(/^\$/, '') || 0)
            if (Number.isFinite(n)) onChange(n)
          }}/>
      </span>
      <span className="setting-help muted" id="help-dailyBudgetUsd">
        When what this project’s runs cost today (local time) reaches it, every running agent is paused at a safe point
        and nothing of it starts until you raise it or the day ends; then they resume. Empty: no limit.
      </span>
      {bad && <span className="field-error" role="alert">an amount of dollars, e.g. 20 or 7.50</span>}
    </label>
  )
}
