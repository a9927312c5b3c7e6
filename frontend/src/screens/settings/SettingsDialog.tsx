import {useEffect, useState} from 'react'
import {useQueryClient} from '@tanstack/react-query'
import {api, errorMessage, type Prefs, type Settings} from '../../api'
import {Dialog} from '../../components/Dialog'
import {keys, useSettings} from '../../state/queries'
import {useUI} from '../../state/ui'

const NUMBERS: [keyof Settings, string][] = [
  ['watchdogIntervalSec', 'Watchdog interval (s)'],
  ['staleCheckIntervalSec', 'Stale check interval (s)'],
  ['staleThresholdSec', 'Silent for this long is stale (s)'],
  ['resultGraceSec', 'Grace after a result line (s)'],
  ['autoResumeLimit', 'Auto-resume limit'],
  ['pausedExpiryDays', 'Paused agents expire after (days)'],
  ['maxRunning', 'Agents running at once (0: no limit)'],
]

/** The selected project's monitoring settings and the notification toggles. */
export function SettingsDialog() {
  const {projectId, close} = useUI()
  const qc = useQueryClient()
  const {data} = useSettings(projectId)
  const [s, setS] = useState<Settings | null>(null)
  const [prefs, setPrefs] = useState<Prefs>({stopAgentsOnQuit: false})
  const [error, setError] = useState('')
  useEffect(() => {
    if (data) setS(data)
  }, [data])
  useEffect(() => {
    api.settings.getPrefs().then(setPrefs, () => {})
  }, [])
  if (!projectId) return null
  const save = async (e: React.FormEvent) => {
    e.preventDefault()
    if (!s) return
    try {
      qc.setQueryData(keys.settings(projectId), await api.settings.put(projectId, s))
      await api.settings.putPrefs(prefs)
      close()
    } catch (err) {
      setError(errorMessage(err))
    }
  }
  return (
    <Dialog title="Project settings" onClose={close}>
      {!s ? <p className="dialog-body">Loading…</p> : (
        <form className="dialog-body form" onSubmit={save}>
          <div className="grid2">
            {NUMBERS.map(([k, label]) => (
              <label key={k}>{label}
                <input name={k} inputMode="numeric" value={String(s[k])}
                  onChange={(e) => setS({...s, [k]: Number(e.target.value)})}/>
              </label>
            ))}
          </div>
          <label className="check">
            <input type="checkbox" name="notifyNative" checked={s.notifyNative} onChange={(e) => setS({...s, notifyNative: e.target.checked})}/>
            Desktop notifications for failures and limits
          </label>
          <label className="check">
            <input type="checkbox" name="notifyCompletion" checked={s.notifyCompletion} onChange={(e) => setS({...s, notifyCompletion: e.target.checked})}/>
            Also notify when an agent completes
          </label>
          <label className="check">
            <input type="checkbox" name="stopAgentsOnQuit" checked={prefs.stopAgentsOnQuit}
              onChange={(e) => setPrefs({stopAgentsOnQuit: e.target.checked})}/>
            Stop all agents when Shepherd quits (every project; off: agents keep running)
          </label>
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
