import type {Settings} from '../../api'

/** Newer engines: each agent log file's cap in MiB and how many rotated files are kept. */
type WithLogs = Settings & {logMaxMiB?: number; logKeep?: number}

const FIELDS = [
  {key: 'logMaxMiB', label: 'Rotate an agent’s log at', unit: 'MiB', def: 10,
    help: 'When agent.log reaches this size it becomes agent.log.1 (agent.log.1 becomes .2, and so on) and a new one begins, so an agent that floods its output cannot fill the disk.'},
  {key: 'logKeep', label: 'Rotated log files kept per agent', unit: '', def: 5,
    help: 'The oldest beyond this many is removed: an agent’s log takes at most (this + 1) × the size above. 0: only the current file.'},
] as const

/** The project's log rotation: the cap per log file and the rotated files kept (applied at each agent's next start). */
export function LogRotationFields({s, onChange}: {s: WithLogs; onChange: (next: WithLogs) => void}) {
  if (s.logMaxMiB === undefined) return null
  return (
    <>
      {FIELDS.map(({key, label, unit, def, help}) => (
        <label key={key} className="setting">
          <span className="setting-label">{label}</span>
          <span className="setting-input">
            <input name={key} inputMode="numeric" value={String(s[key] ?? '')} aria-describedby={`help-${key}`}
              onChange={(e) => onChange({...s, [key]: Number(e.target.value)})}/>
            {unit && <span className="muted">{unit}</span>}
          </span>
          <span className="setting-help muted" id={`help-${key}`}>{help} Applies from each agent’s next start. Default: {def}{unit ? ` ${unit}` : ''}.</span>
        </label>
      ))}
    </>
  )
}
