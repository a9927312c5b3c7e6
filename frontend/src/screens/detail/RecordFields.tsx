import type {Agent} from '../../api'
import {joinArgs, looksSecret} from '../../lib/args'
import {limitsText, withBudgetFlags} from '../../lib/budget'
import {clock} from '../../lib/time'
import {figuresText, mib} from '../../lib/usage'
import {SandboxField} from './SandboxField'

/** Every field of the record, secrets masked. */
export function RecordFields({agent: a}: {agent: Agent}) {
  const env = Object.entries(a.env ?? {})
  const rows: [string, React.ReactNode][] = [
    ['Command', <code>{joinArgs([a.command, ...withBudgetFlags(a, a.args ?? [])])}</code>],
    ['Working folder', <code>{a.cwd}</code>],
    ['Profile', a.profile],
    ['Resume arguments', a.resumeArgs?.length ? <code>{joinArgs(withBudgetFlags(a, a.resumeArgs))}</code> : '—'],
    ['Budget per run', limitsText(a) || 'none'],
    ['Session id', a.sessionId || '—'],
    ['Environment', env.length ? env.map(([k, v]) => <div key={k}><code>{k}={looksSecret(k) ? '••••••' : v}</code></div>) : '—'],
    ['Sandbox', <SandboxField grants={a.sandbox}/>],
    ['Created by', a.parent ? <span>agent <code>{a.parent}</code> <span className="muted">(it may start, stop, edit and remove this one; no other agent may)</span></span> : 'you'],
    ['Status', `${a.status}${a.exitReason ? ` (${a.exitReason})` : ''}`],
    ['Desired', a.desired],
    ['Exit code', a.exitCode ?? '—'],
    ['Signal', a.signal || '—'],
    ['Error', a.error || '—'],
    ['PID', a.pid || '—'],
    ['Attached', a.attached ? 'yes' : 'no (re-attached)'],
    ['Timeout', a.timeoutSec ? `${a.timeoutSec} s` : 'none'],
    ['Stop grace', `${a.graceSec} s`],
    ['Keep alive', a.keepAlive ? 'yes' : 'no'],
    ['Start on open', a.autoStartOnRestore ? 'yes' : 'no'],
    ['Created', clock(a.createdAt)],
    ['Started', clock(a.startedAt)],
    ['Stopped', clock(a.stoppedAt)],
    ['Last activity', clock(a.lastActivityAt)],
    ['Restarts', `${a.restartCount} (failures in a row: ${a.restartFailureCount})${a.nextRestartAt ? `, next ${clock(a.nextRestartAt)}` : ''}`],
    ['Resumes', `${a.resumeCount} manual, ${a.autoResumeCount} automatic`],
    ['Log', <code>{a.logPath}</code>],
  ]
  const opt: [string, React.ReactNode][] = []
  if (a.activity) opt.push(['Activity', `${a.activity.state}${a.activity.tool ? ` · ${a.activity.tool}` : ''} since ${clock(a.activity.since)}`])
  if (a.queuePosition) opt.push(['Queue', `#${a.queuePosition}`])
  if (a.pausedAt) opt.push(['Paused', `${clock(a.pausedAt)}${a.pauseNote ? ` — ${a.pauseNote}` : ''}`])
  if (a.lastResult) opt.push(['Latest run', figuresText(a.lastResult)])
  if (a.totals) opt.push(['All runs', figuresText(a.totals)])
  if (a.stats) opt.push(['CPU / memory', `${a.stats.cpuPercent?.toFixed(1) ?? '?'} % · ${a.stats.rssBytes != null ? mib(a.stats.rssBytes) : '?'}`])
  rows.splice(7, 0, ...opt)
  return (
    <dl className="fields">
      {rows.map(([k, v]) => (
        <div key={k}><dt>{k}</dt><dd>{v}</dd></div>
      ))}
    </dl>
  )
}
