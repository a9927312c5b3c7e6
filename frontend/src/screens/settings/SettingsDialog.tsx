import {useEffect, useState} from 'react'
import {useQueryClient} from '@tanstack/react-query'
import {api, errorMessage, type Prefs, type Settings} from '../../api'
import {Dialog} from '../../components/Dialog'
import {supportText} from '../../lib/sandbox'
import {keys, useProjects, useSandboxSupport, useSettings} from '../../state/queries'
import {useUI} from '../../state/ui'
import {DailyBudgetField} from './DailyBudgetField'
import {BoxLimitsFields} from './BoxLimitsFields'
import {LogRotationFields} from './LogRotationFields'
import {WebhooksSection} from './WebhooksSection'

/** What of the sandbox this machine enforces, in a line (for every project). */
function SandboxSupportLine() {
  const {data, error} = useSandboxSupport()
  if (error) return <p className="muted hint">Sandbox support unknown: {errorMessage(error)}</p>
  if (!data) return null
  const {text, ok} = supportText(data)
  return (
    <p className={ok ? 'muted hint' : 'field-warn'} data-sandbox-support>
      <span className="lead">Sandbox on this machine:</span> {text}
      {!ok && ' Sandboxed agents that need what is missing do not start.'}
    </p>
  )
}

type NumberKey = 'watchdogIntervalSec' | 'staleCheckIntervalSec' | 'staleThresholdSec' | 'busyThresholdSec' | 'resultGraceSec' |
  'autoResumeLimit' | 'pausedExpiryDays' | 'maxRunning' | 'safePointWaitSec'

/** Each setting in plain words, with its unit and default. */
export const EXPLAINED: {key: NumberKey; label: string; unit: string; def: number; help: string}[] = [
  {key: 'staleThresholdSec', label: 'Silent for this long counts as hung', unit: 's', def: 300,
    help: 'Every agent is watched, whatever its command: one whose log has not grown for this long and that uses no CPU is silent. A Claude Code or Codex agent is then resumed in its session when it can be; any other command is flagged in Needs you and left running (each agent’s form can choose flag, restart or resume, or turn the check off).'},
  {key: 'busyThresholdSec', label: 'Busy with one tool call for this long counts as hung', unit: 's', def: 1800,
    help: 'An agent in the middle of a tool call (a long build, a test run) is not judged by its silence until then. 0: never.'},
  {key: 'autoResumeLimit', label: 'Automatic resumes before giving up', unit: '', def: 3,
    help: 'How many times a hung or vanished agent is resumed on its own before it is marked failed. Resuming it yourself resets the count.'},
  {key: 'maxRunning', label: 'Agents running at once', unit: '', def: 0,
    help: 'More starts wait in a queue, first in first out. 0: no limit.'},
  {key: 'resultGraceSec', label: 'Wait after a Claude result', unit: 's', def: 5,
    help: 'A Claude agent that wrote its final result but is still running after this long (MCP servers keep it open) is stopped.'},
  {key: 'staleCheckIntervalSec', label: 'Look for silent agents every', unit: 's', def: 60,
    help: 'How often the silence above is checked.'},
  {key: 'watchdogIntervalSec', label: 'Check that running agents still exist every', unit: 's', def: 30,
    help: 'An agent whose process vanished without Shepherd seeing it exit is found on the second check in a row.'},
  {key: 'safePointWaitSec', label: 'When pausing, wait for a tool call in flight at most', unit: 's', def: 120,
    help: 'A Claude agent paused in the middle of a tool call is let finish it (plus its grace), so its session keeps the result.'},
  {key: 'pausedExpiryDays', label: 'Paused agents expire after', unit: 'days', def: 30,
    help: 'A paused agent not resumed within this time is marked failed (its session and log are kept).'},
]

/** The selected project's monitoring settings and notification toggles, each explained, with its default. */
export function SettingsDialog() {
  const {projectId, close, open} = useUI()
  const qc = useQueryClient()
  const {data} = useSettings(projectId)
  const project = useProjects().data?.find((p) => p.id === projectId)
  const [s, setS] = useState<Settings | null>(null)
  const [error, setError] = useState('')
  useEffect(() => {
    if (data) setS(data)
  }, [data])
  if (!projectId) return null
  const save = async (e: React.FormEvent) => {
    e.preventDefault()
    if (!s) return
    try {
      qc.setQueryData(keys.settings(projectId), await api.settings.put(projectId, s))
      void qc.invalidateQueries({queryKey: keys.projects}) // the header shows the daily budget
      close()
    } catch (err) {
      setError(errorMessage(err))
    }
  }
  return (
    <Dialog title={`Settings of ${project?.name ?? 'this project'}`} onClose={close} wide>
      {!s ? <p className="dialog-body">Loading…</p> : (
        <form className="dialog-body form settings" onSubmit={save}>
          <p className="muted hint">How Shepherd watches the agents of this project. Changes apply at once.</p>
          {EXPLAINED.filter(({key}) => s[key] !== undefined).map(({key, label, unit, def, help}) => (
            <label key={key} className="setting">
              <span className="setting-label">{label}</span>
              <span className="setting-input">
                <input name={key} inputMode="numeric" value={String(s[key] ?? '')} aria-describedby={`help-${key}`}
                  onChange={(e) => setS({...s, [key]: Number(e.target.value)})}/>
                {unit && <span className="muted">{unit}</span>}
              </span>
              <span className="setting-help muted" id={`help-${key}`}>{help} Default: {def}{unit ? ` ${unit}` : ''}.</span>
            </label>
          ))}
          {s.dailyBudgetUsd !== undefined && (
            <DailyBudgetField value={s.dailyBudgetUsd} onChange={(usd) => setS({...s, dailyBudgetUsd: usd})}/>
          )}
          <LogRotationFields s={s} onChange={setS}/>
          <label className="check">
            <input type="checkbox" name="notifyNative" checked={s.notifyNative} onChange={(e) => setS({...s, notifyNative: e.target.checked})}/>
            Desktop notifications when an agent fails, hangs or reaches its resume limit <span className="muted">(default: on)</span>
          </label>
          <label className="check">
            <input type="checkbox" name="notifyCompletion" checked={s.notifyCompletion} onChange={(e) => setS({...s, notifyCompletion: e.target.checked})}/>
            Also notify when an agent completes <span className="muted">(default: off)</span>
          </label>
          {s.usageLimitWait !== undefined && (
            <label className="check">
              <input type="checkbox" name="usageLimitWait" checked={s.usageLimitWait} onChange={(e) => setS({...s, usageLimitWait: e.target.checked})}/>
              A Claude Code or Codex run stopped by its subscription’s usage limit waits for the reset and resumes, instead of
              failing <span className="muted">(default: on)</span>
            </label>
          )}
          <label className="setting">
            <span className="setting-label">Worktree setup command</span>
            <span className="setting-input">
              <input name="worktreeSetup" value={s.worktreeSetup ?? ''} placeholder="npm ci" aria-describedby="help-worktreeSetup"
                onChange={(e) => setS({...s, worktreeSetup: e.target.value})}/>
            </span>
            <span className="setting-help muted" id="help-worktreeSetup">
              Run (with sh -c) in each new worktree an agent gets, before it starts; its output goes to the agent’s log. Default: none.
            </span>
          </label>
          <SandboxSupportLine/>
          <BoxLimitsFields s={s} onChange={setS}/>
          <p className="muted hint">
            Preferences for Shepherd itself (such as stopping agents when it quits) are in{' '}
            <button type="button" className="link" onClick={() => open({kind: 'prefs'})}>Preferences</button>.
          </p>
          {error && <p className="field-error" role="alert">{error}</p>}
          <footer className="dialog-foot">
            <button type="button" onClick={close}>Cancel</button>
            <button type="submit" className="primary">Save</button>
          </footer>
        </form>
      )}
    </Dialog>
  )
}

/** Shepherd's own preferences, for every project. */
export function PrefsDialog() {
  const close = useUI((s) => s.close)
  const [prefs, setPrefs] = useState<Prefs | null>(null)
  const [error, setError] = useState('')
  useEffect(() => {
    api.settings.getPrefs().then(setPrefs, (err: unknown) => {
      setPrefs({stopAgentsOnQuit: false, startAtLogin: false})
      setError(errorMessage(err))
    })
  }, [])
  const save = async (e: React.FormEvent) => {
    e.preventDefault()
    if (!prefs) return
    try {
      await api.settings.putPrefs(prefs)
      close()
    } catch (err) {
      setError(errorMessage(err))
    }
  }
  return (
    <Dialog title="Preferences" onClose={close}>
      {!prefs ? <p className="dialog-body">Loading…</p> : (
        <form className="dialog-body form" onSubmit={save}>
          <label className="check">
            <input type="checkbox" name="stopAgentsOnQuit" checked={prefs.stopAgentsOnQuit}
              onChange={(e) => setPrefs({...prefs, stopAgentsOnQuit: e.target.checked})}/>
            Stop all agents when Shepherd quits
          </label>
          <p className="muted hint">
            Every project. Off (the default), agents keep running when Shepherd closes and are picked up again when it
            comes back.
          </p>
          {prefs.startAtLogin !== undefined && (
            <>
              <label className="check">
                <input type="checkbox" name="startAtLogin" checked={prefs.startAtLogin}
                  onChange={(e) => setPrefs({...prefs, startAtLogin: e.target.checked})}/>
                Start Shepherd hidden when I log in
              </label>
              <p className="muted hint">So agents are watched and resumed after a reboot without opening the window. Default: off.</p>
            </>
          )}
          <WebhooksSection/>
          {error && <p className="field-error" role="alert">{error}</p>}
          <footer className="dialog-foot">
            <button type="button" onClick={close}>Cancel</button>
            <button type="submit" className="primary">Save</button>
          </footer>
        </form>
      )}
    </Dialog>
  )
}
