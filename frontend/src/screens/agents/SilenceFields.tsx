import {short} from '../../lib/time'
import {useSettings} from '../../state/queries'
import {takesPrompt} from './presets'

export interface SilenceValues {
  /** The silence check (default on, for every command). */
  staleCheck: boolean
  /** flag | restart | resume; '' the profile's default. */
  onStale: string
}

/** What a silent agent gets by default: resume for Claude Code and Codex (their log says where they were), flag for any other command. */
export const defaultOnStale = (profile: string) => (takesPrompt(profile) ? 'resume' : 'flag')

/** Whether onStale may be resume: the profiles whose log and session Shepherd can read. */
export const canResumeOnStale = (profile: string) => takesPrompt(profile)

/** What happens to this agent once silent, in words. */
export function onStaleText(policy: string, profile: string): string {
  switch (policy) {
    case 'restart': return 'killed and started again with its arguments'
    case 'resume':
      return canResumeOnStale(profile)
        ? 'its log is read: marked done if it finished, else killed and resumed in its session (up to the resume limit)'
        : 'flagged in Needs you (left running): this command has no session to resume'
  }
  return 'flagged in Needs you (left running), and you are notified'
}

interface Props {
  values: SilenceValues
  profile: string
  projectId: string
  onChange: (patch: Partial<SilenceValues>) => void
}

/** The silence check as it applies to this agent: on or off, after how long, and what it then gets. */
export function SilenceFields({values: v, profile, projectId, onChange}: Props) {
  const settings = useSettings(projectId).data
  const threshold = settings?.staleThresholdSec ?? 300
  const busy = settings?.busyThresholdSec ?? 1800
  const def = defaultOnStale(profile)
  const resumable = canResumeOnStale(profile)
  // A choice the profile no longer allows counts as the default.
  const chosen = v.onStale === 'resume' && !resumable ? '' : v.onStale
  const policy = chosen || def
  return (
    <fieldset className="silence">
      <legend>Silence check</legend>
      <label className="check">
        <input type="checkbox" name="staleCheck" checked={v.staleCheck} onChange={(e) => onChange({staleCheck: e.target.checked})}/>
        Watch it for silence
      </label>
      {v.staleCheck
        ? <>
            <p className="hint" data-silence-rule>
              Silent past {threshold} s{threshold >= 60 ? ` (${short(threshold * 1000)})` : ''} with no CPU use → {onStaleText(policy, profile)}.
              {resumable && busy > 0 && <> A tool call in flight counts as work for up to {short(busy * 1000)}.</>}
              <span className="muted"> The threshold is a project setting.</span>
            </p>
            <label className="inline">
              When it is silent
              <select name="onStale" value={chosen} onChange={(e) => onChange({onStale: e.target.value})}>
                <option value="">Default: {def === 'resume' ? 'resume its session' : 'flag it'}</option>
                <option value="flag">Flag it in Needs you, leave it running</option>
                <option value="restart">Restart it</option>
                {resumable && <option value="resume">Resume its session</option>}
              </select>
            </label>
          </>
        : <p className="hint muted" data-silence-rule>Off: a silent {takesPrompt(profile) ? 'session' : 'command'} is never flagged, restarted or resumed.</p>}
    </fieldset>
  )
}
