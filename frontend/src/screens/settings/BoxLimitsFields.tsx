import type {SandboxSupport, Settings} from '../../api'
import {useSandboxSupport} from '../../state/queries'

/** The box limits of a project's settings (absent from an engine that has none). */
export interface BoxLimits {
  boxMaxProcesses?: number
  boxMemoryMiB?: number
  boxShmMiB?: number
}

type Key = keyof BoxLimits

const FIELDS: {key: Key; label: string; unit: string; def: string; help: string}[] = [
  {key: 'boxMaxProcesses', label: 'Processes per sandboxed agent', unit: '', def: '4096',
    help: 'Processes and threads one sandboxed agent may run at once, its own tools and builds included: a fork bomb stops there. 0: no limit.'},
  {key: 'boxMemoryMiB', label: 'Memory per sandboxed agent', unit: 'MiB', def: 'half of this machine’s memory',
    help: 'What a sandboxed agent may use before its allocations fail (or, with a cgroup, its biggest process is stopped). 0: no limit.'},
  {key: 'boxShmMiB', label: 'Scratch space (/dev/shm) per sandboxed agent', unit: 'MiB', def: '1024',
    help: 'A sandboxed agent’s /dev/shm, also its TMPDIR (test binaries, build scratch), held in memory and gone with it. 0: the kernel’s default, half the memory.'},
]

/** How this machine enforces the limits, in a sentence. */
export function limitsText(s: (SandboxSupport & {limits?: string; pidLimit?: boolean}) | undefined): string {
  switch (s?.limits) {
    case 'cgroup':
      return 'Enforced here by a cgroup of each sandboxed agent’s own: its processes and memory counted together.'
    case 'rlimit':
      return 'Enforced here by resource limits: memory is counted per process, not for the agent as a whole' +
        (s.pidLimit ? '.' : ', and processes are not limited for agents running as root.')
    default:
      return s?.os === 'darwin' ? 'macOS enforces none of these limits.' : ''
  }
}

/** Settings of the project's sandboxed agents' limits, applied at each start. */
export function BoxLimitsFields<S extends Settings>({s, onChange}: {s: S; onChange: (s: S) => void}) {
  const {data} = useSandboxSupport()
  const v = s as S & BoxLimits
  if (v.boxMaxProcesses === undefined) return null
  const text = limitsText(data)
  return (
    <>
      <p className="muted hint" data-box-limits>
        <span className="lead">Limits of each sandboxed agent,</span> so that none can exhaust what you need; applied when it
        starts. {text}
      </p>
      {FIELDS.map(({key, label, unit, def, help}) => (
        <label key={key} className="setting">
          <span className="setting-label">{label}</span>
          <span className="setting-input">
            <input name={key} inputMode="numeric" value={String(v[key] ?? '')} aria-describedby={`help-${key}`}
              onChange={(e) => onChange({...s, [key]: Number(e.target.value)})}/>
            {unit && <span className="muted">{unit}</span>}
          </span>
          <span className="setting-help muted" id={`help-${key}`}>{help} Default: {def}{/^\d/.test(def) && unit ? ` ${unit}` : ''}.</span>
        </label>
      ))}
    </>
  )
}
