import {useState} from 'react'
import {api, errorMessage, type Agent} from '../../api'
import {useMCPConfig} from '../../state/queries'
import {CommandField} from './CommandField'
import {EnvRows} from './EnvRows'
import {BudgetFields} from './BudgetFields'
import {localErrors, specOf, valuesOf, type FormErrors} from './formSpec'
import {CLAUDE, CODEX, EMPTY, fieldOf, PRESETS, presetValues, PROFILES, takesPrompt, type FormValues} from './presets'
import {SandboxFields} from './SandboxFields'
import {SilenceFields} from './SilenceFields'
import {useWorktreeDefault, WorktreeFields} from './WorktreeFields'

interface Props {
  projectId: string
  projectPath: string
  editing?: Agent
  onDone: (a: Agent, start?: boolean) => void
  onCancel: () => void
}

/** Create or edit an agent. Invalid input shows the engine's own message at its field; nothing is saved. */
export function AgentForm({projectId, projectPath, editing, onDone, onCancel}: Props) {
  const [v, setV] = useState<FormValues>(editing ? valuesOf(editing) : {...EMPTY, ...presetValues('custom')})
  const [draft, setDraft] = useState('') // a folder to write to, typed but not added yet
  const [errors, setErrors] = useState<FormErrors>({})
  const [busy, setBusy] = useState(false)
  const claude = v.profile === CLAUDE
  const mcp = useMCPConfig(claude)
  const gitProject = useWorktreeDefault(projectId)
  const set = (patch: Partial<FormValues>) => setV((old) => ({...old, ...patch}))
  const field = (k: keyof FormValues) => ({
    name: k, value: v[k] as string, 'aria-invalid': !!errors[k] || undefined,
    onChange: (e: React.ChangeEvent<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>) => set({[k]: e.target.value} as Partial<FormValues>),
  })
  const err = (k: keyof FormValues) => errors[k] && <span className="field-error" role="alert">{errors[k]}</span>

  const pickCwd = async () => {
    const dir = await api.projects.pickFolder('Choose the working folder').catch(() => '')
    if (dir) set({cwd: dir})
  }
  const submit = async (e: React.FormEvent, start = false) => {
    e.preventDefault()
    // A folder typed and not added is meant all the same.
    const d = draft.trim()
    const values = v.sandboxed && d && !v.writeDirs.includes(d) ? {...v, writeDirs: [...v.writeDirs, d]} : v
    if (values !== v) {
      setV(values)
      setDraft('')
    }
    // Shepherd's tools: its current --mcp-config value, asked now if it has not come yet.
    const cfg = claude && values.mcp ? mcp.data ?? (await mcp.refetch()).data : undefined
    const local = localErrors(values, cfg)
    if (Object.keys(local).length) return setErrors(local)
    setBusy(true)
    setErrors({})
    try {
      const spec = specOf(values, cfg)
      onDone(editing ? await api.agents.update(projectId, spec) : await api.agents.create(projectId, spec), start)
    } catch (x) {
      const msg = errorMessage(x)
      setErrors({[fieldOf(msg) || 'form']: msg})
    } finally {
      setBusy(false)
    }
  }
  const prompted = takesPrompt(v.profile)
  // The preset the form holds now: its profile and command, else a custom command.
  const preset = PRESETS.find((p) => p.values.profile === v.profile && p.values.command === v.command.trim())?.id ?? 'custom'
  return (
    <form className="dialog-body form agent-form" onSubmit={submit} noValidate>
      {!editing && (
        <div className="presets" role="group" aria-label="Preset">
          {PRESETS.map((p) => (
            <button type="button" key={p.id} aria-pressed={p.id === preset}
              onClick={() => set({...p.values, worktree: p.id !== 'custom' && gitProject})}>{p.label}</button>
          ))}
        </div>
      )}
      <div className="grid2">
        <label>Id<input {...field('id')} readOnly={!!editing} placeholder="build"/>{err('id')}</label>
        <label>Name<input {...field('name')} placeholder="optional"/></label>
      </div>
      <CommandField input={<input {...field('command')} placeholder="claude, codex, make, npm …"/>} error={err('command')}
        command={v.command} cwd={v.cwd.trim() || projectPath}/>
      {prompted && (
        <label>Prompt <span className="hint">(the task; {v.profile === CODEX ? 'the last argument' : <>passed after <code>--</code></>})</span>
          <textarea name="prompt" rows={4} value={v.prompt} placeholder="Fix the failing tests in ./pkg and explain what was wrong."
            onChange={(e) => set({prompt: e.target.value})}/>
        </label>
      )}
      <div className={prompted ? 'grid2' : undefined}>
        <label>Arguments<input {...field('args')} placeholder={v.profile === CODEX ? 'exec --json' : '-p --verbose'}/></label>
        {prompted && (
          <label>Model <span className="hint">(optional: <code>{v.profile === CODEX ? '-m' : '--model'}</code>)</span>
            <input {...field('model')} placeholder="default"/>{err('model')}
          </label>
        )}
      </div>
      {claude && (
        <div className="mcp">
          <label className="check">
            <input type="checkbox" name="mcp" checked={v.mcp} onChange={(e) => set({mcp: e.target.checked})}/>
            Give it Shepherd’s tools (MCP)
          </label>
          <span className="hint muted">
            It can run and watch its own dev servers and test runs through Shepherd: they show in this list with their
            output kept, and stop when it is removed. What it starts runs sandboxed.
          </span>
          {err('mcp') || (v.mcp && mcp.error && !v.mcpValue && (
            <span className="field-error" role="alert">Shepherd’s MCP configuration is not available: {errorMessage(mcp.error)}</span>
          ))}
        </div>
      )}
      <label>
        Working folder
        <span className="row">
          <input {...field('cwd')} placeholder={projectPath}/>
          <button type="button" onClick={pickCwd}>Choose…</button>
        </span>
        {err('cwd')}
      </label>
      <div className="grid2">
        <label>
          Log profile
          <select {...field('profile')}>
            {PROFILES.map((p) => <option key={p} value={p}>{p}</option>)}
          </select>
          {err('profile')}
        </label>
        <label>Resume arguments<input {...field('resumeArgs')} placeholder="… --resume {sessionId}"/>{err('resumeArgs')}</label>
      </div>
      <WorktreeFields values={v} onChange={set} error={err('base')}
        editing={editing ? {branch: editing.workspace?.branch, path: editing.workspace?.path} : undefined}/>
      <SandboxFields values={v} draft={draft} onDraft={setDraft} error={errors.writeDirs}
        onChange={(patch) => {
          set(patch)
          setErrors((old) => ({...old, writeDirs: undefined})) // the engine's word on the old grants no longer holds
        }} cwd={v.cwd.trim() || projectPath}/>
      <EnvRows rows={v.env} onChange={(env) => set({env})}/>
      {err('env')}
      <div className="grid2">
        <label>Timeout (s, 0 = none)<input {...field('timeoutSec')} inputMode="numeric"/>{err('timeoutSec')}</label>
        <label>Stop grace (s)<input {...field('graceSec')} inputMode="numeric"/>{err('graceSec')}</label>
      </div>
      <SilenceFields values={v} profile={v.profile} projectId={projectId} onChange={set}/>
      <BudgetFields values={v} onChange={set} errors={errors}/>
      <label className="check">
        <input type="checkbox" checked={v.keepAlive} onChange={(e) => set({keepAlive: e.target.checked})}/>
        Keep alive (restart when it dies, with backoff)
      </label>
      <label className="check">
        <input type="checkbox" checked={v.autoStartOnRestore} onChange={(e) => set({autoStartOnRestore: e.target.checked})}/>
        Start when Shepherd opens the project
      </label>
      {errors.form && <p className="field-error" role="alert">{errors.form}</p>}
      <footer className="dialog-foot">
        <button type="button" onClick={onCancel}>Cancel</button>
        {editing
          ? <button type="submit" className="primary" disabled={busy}>Save</button>
          : <>
              <button type="submit" disabled={busy} title="Create it; start it later">Create agent</button>
              <button type="button" className="primary" disabled={busy} title="Create it and start it now"
                onClick={(e) => void submit(e, true)}>Create and start</button>
            </>}
      </footer>
    </form>
  )
}
