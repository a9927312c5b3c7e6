import {useEffect, useState} from 'react'
import {api, errorMessage, type Agent, type AgentSpec} from '../../api'
import {joinArgs, splitArgs} from '../../lib/args'
import {CLAUDE_INSTALL, EMPTY, fieldOf, PRESETS, splitPrompt, takesPrompt, withModel, withoutModel, withPrompt, type FormValues} from './presets'
import {EnvRows} from './EnvRows'

export function valuesOf(a: Agent): FormValues {
  const profile = a.profile || 'generic'
  const claude = takesPrompt(profile) ? splitPrompt(a.args ?? []) : {args: a.args ?? [], prompt: '', model: ''}
  return {
    id: a.id, name: a.name ?? '', command: a.command, args: joinArgs(claude.args), cwd: a.cwd,
    profile, resumeArgs: joinArgs(withoutModel(a.resumeArgs ?? [], claude.model)),
    env: Object.entries(a.env ?? {}).map(([key, value]) => ({key, value})),
    timeoutSec: String(a.timeoutSec), graceSec: String(a.graceSec),
    keepAlive: a.keepAlive, autoStartOnRestore: a.autoStartOnRestore, prompt: claude.prompt, model: claude.model,
  }
}

/** The spec sent to the engine; numbers that are not whole numbers are left for the engine to refuse. */
export function specOf(v: FormValues): AgentSpec {
  const env: Record<string, string> = {}
  for (const r of v.env) if (r.key.trim() || r.value) env[r.key.trim()] = r.value
  const claude = takesPrompt(v.profile)
  const args = claude ? withPrompt(splitArgs(v.args), v.prompt, v.model) : splitArgs(v.args)
  const resumeArgs = claude ? withModel(splitArgs(v.resumeArgs), v.model) : splitArgs(v.resumeArgs)
  return {
    id: v.id.trim(), name: v.name.trim() || undefined, command: v.command.trim(), args,
    cwd: v.cwd.trim() || undefined, profile: v.profile, resumeArgs, env,
    timeoutSec: Number(v.timeoutSec || 0), graceSec: Number(v.graceSec || 0),
    keepAlive: v.keepAlive, autoStartOnRestore: v.autoStartOnRestore,
  }
}

/** Checks the form can be sent at all; everything else is the engine's to judge. */
export function localErrors(v: FormValues): Partial<Record<keyof FormValues, string>> {
  const e: Partial<Record<keyof FormValues, string>> = {}
  if (!/^-?\d+$/.test(v.timeoutSec.trim() || '0')) e.timeoutSec = 'a whole number of seconds (0: none)'
  if (!/^-?\d+$/.test(v.graceSec.trim() || '0')) e.graceSec = 'a whole number of seconds'
  return e
}

interface Props {
  projectId: string
  projectPath: string
  editing?: Agent
  onDone: (a: Agent, start?: boolean) => void
  onCancel: () => void
}

/** Warns (never refuses) when the command is not found on the engine's PATH: it may be set later. */
function useMissingCommand(command: string, cwd: string): string {
  const [missing, setMissing] = useState('')
  useEffect(() => {
    const cmd = command.trim()
    if (!cmd || !api.agents.lookPath) {
      setMissing('')
      return
    }
    let live = true
    const t = setTimeout(() => {
      api.agents.lookPath(cmd, cwd).then(() => live && setMissing(''), () => live && setMissing(cmd))
    }, 250)
    return () => {
      live = false
      clearTimeout(t)
    }
  }, [command, cwd])
  return missing
}

/** Create or edit an agent. Invalid input shows the engine's own message at its field; nothing is saved. */
export function AgentForm({projectId, projectPath, editing, onDone, onCancel}: Props) {
  const [v, setV] = useState<FormValues>(editing ? valuesOf(editing) : {...EMPTY, ...PRESETS[1].values})
  const [errors, setErrors] = useState<Partial<Record<keyof FormValues | 'form', string>>>({})
  const [busy, setBusy] = useState(false)
  const missing = useMissingCommand(v.command, v.cwd.trim() || projectPath)
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
    const local = localErrors(v)
    if (Object.keys(local).length) return setErrors(local)
    setBusy(true)
    setErrors({})
    try {
      const spec = specOf(v)
      onDone(editing ? await api.agents.update(projectId, spec) : await api.agents.create(projectId, spec), start)
    } catch (x) {
      const msg = errorMessage(x)
      setErrors({[fieldOf(msg) || 'form']: msg})
    } finally {
      setBusy(false)
    }
  }
  return (
    <form className="dialog-body form agent-form" onSubmit={submit} noValidate>
      {!editing && (
        <div className="presets" role="group" aria-label="Preset">
          {PRESETS.map((p) => (
            <button type="button" key={p.id} onClick={() => set(p.values)}>{p.label}</button>
          ))}
        </div>
      )}
      <div className="grid2">
        <label>Id<input {...field('id')} readOnly={!!editing} placeholder="build"/>{err('id')}</label>
        <label>Name<input {...field('name')} placeholder="optional"/></label>
      </div>
      <label>Command<input {...field('command')} placeholder="claude, make, npm …"/>{err('command')}
        {missing && (
          <span className="field-warn" role="status">
            <strong>{missing}</strong> is not on the PATH Shepherd was started with.{' '}
            {missing === 'claude' ? <>Install it with <code>{CLAUDE_INSTALL}</code>, or give its full path.</> : 'Give its full path, or install it.'}
            {' '}You can still create the agent; it starts once the command can be found.
          </span>
        )}
      </label>
      {takesPrompt(v.profile) && (
        <label>Prompt <span className="hint">(the task; passed after <code>--</code>)</span>
          <textarea name="prompt" rows={4} value={v.prompt} placeholder="Fix the failing tests in ./pkg and explain what was wrong."
            onChange={(e) => set({prompt: e.target.value})}/>
        </label>
      )}
      <div className={takesPrompt(v.profile) ? 'grid2' : undefined}>
        <label>Arguments<input {...field('args')} placeholder="-p --verbose"/></label>
        {takesPrompt(v.profile) && (
          <label>Model <span className="hint">(optional: <code>--model</code>)</span><input {...field('model')} placeholder="default"/>{err('model')}</label>
        )}
      </div>
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
            <option value="generic">generic</option>
            <option value="claude-stream-json">claude-stream-json</option>
          </select>
          {err('profile')}
        </label>
        <label>Resume arguments<input {...field('resumeArgs')} placeholder="… --resume {sessionId}"/>{err('resumeArgs')}</label>
      </div>
      <EnvRows rows={v.env} onChange={(env) => set({env})}/>
      {err('env')}
      <div className="grid2">
        <label>Timeout (s, 0 = none)<input {...field('timeoutSec')} inputMode="numeric"/>{err('timeoutSec')}</label>
        <label>Stop grace (s)<input {...field('graceSec')} inputMode="numeric"/>{err('graceSec')}</label>
      </div>
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
