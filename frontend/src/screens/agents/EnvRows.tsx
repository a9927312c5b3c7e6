import {useState} from 'react'
import {looksSecret} from '../../lib/args'

type Row = {key: string; value: string}

/** Key/value rows for the environment; values of secret-looking keys are masked. */
export function EnvRows({rows, onChange}: {rows: Row[]; onChange: (rows: Row[]) => void}) {
  const [shown, setShown] = useState<Record<number, boolean>>({})
  const set = (i: number, patch: Partial<Row>) => onChange(rows.map((r, j) => (j === i ? {...r, ...patch} : r)))
  return (
    <fieldset className="env">
      <legend>Environment</legend>
      {rows.map((r, i) => {
        const secret = looksSecret(r.key)
        return (
          <div className="row" key={i}>
            <input aria-label={`Variable ${i + 1} name`} placeholder="NAME" value={r.key}
              onChange={(e) => set(i, {key: e.target.value})}/>
            <input aria-label={`Variable ${i + 1} value`} placeholder="value" value={r.value}
              type={secret && !shown[i] ? 'password' : 'text'} autoComplete="off"
              onChange={(e) => set(i, {value: e.target.value})}/>
            {secret && (
              <button type="button" className="link" onClick={() => setShown({...shown, [i]: !shown[i]})}>
                {shown[i] ? 'Hide' : 'Show'}
              </button>
            )}
            <button type="button" className="icon" aria-label={`Remove variable ${i + 1}`}
              onClick={() => onChange(rows.filter((_, j) => j !== i))}>×</button>
          </div>
        )
      })}
      <button type="button" className="link" onClick={() => onChange([...rows, {key: '', value: ''}])}>+ Add variable</button>
    </fieldset>
  )
}
