import {describe, expect, it} from 'vitest'
import {agent, at, NOW} from '../test/fixtures'
import {activityText, briefDetail, canResume, restartText, runtimeText, statusView} from './status'

describe('statusView', () => {
  it.each([
    ['completed is a green check', {status: 'completed', exitReason: 'completed', exitCode: 0}, '✔', 'ok', 'exit code 0'],
    ['failed is red with its error', {status: 'failed', exitReason: 'failed', exitCode: 3, error: 'Process exited with code 3'}, '✖', 'bad', 'Process exited with code 3'],
    ['a crash names the signal', {status: 'failed', exitReason: 'crashed', signal: 'SIGSEGV'}, '✖', 'bad', 'crashed (killed by SIGSEGV)'],
    ['exited while closed with its code', {status: 'failed', exitReason: 'exited_while_app_closed', exitCode: 2}, '⚠', 'warn', 'exited while Shepherd was closed — exit code 2'],
    ['exited while closed, code unknown', {status: 'interrupted', exitReason: 'exited_while_app_closed'}, '⚠', 'warn', 'exited while Shepherd was closed — reason unknown'],
    ['orphaned says the watchdog found it', {status: 'interrupted', exitReason: 'orphaned'}, '⚠', 'warn', 'process vanished — detected by watchdog'],
    ['pid reused', {status: 'interrupted', exitReason: 'pid_reused'}, '⚠', 'warn', 'its pid now belongs to another process (pid reused)'],
    ['resume limit', {status: 'failed', exitReason: 'resume_limit'}, '✖', 'bad', 'auto-resume limit reached'],
    ['stopped by the user', {status: 'stopped', exitReason: 'stopped_by_user'}, '■', 'idle', 'stopped by user'],
    ['running is live', {status: 'running'}, '●', 'live', undefined],
  ] as const)('%s', (_name, patch, icon, tone, detail) => {
    const v = statusView(agent(patch))
    expect(v.icon).toBe(icon)
    expect(v.tone).toBe(tone)
    expect(v.detail).toBe(detail)
  })
})

describe('runtimeText', () => {
  it('counts a running agent live', () => {
    expect(runtimeText(agent({status: 'running', startedAt: at(125)}), NOW)).toBe('2 min 05 s')
  })
  it('is start to stop for an ended agent', () => {
    expect(runtimeText(agent({status: 'completed', startedAt: at(100), stoppedAt: at(55)}), NOW)).toBe('45 s')
  })
  it('is "unknown" where it is', () => {
    expect(runtimeText(agent({status: 'interrupted', startedAt: at(100)}), NOW)).toBe('unknown')
    // Never run: "—", whatever its status (a start that failed, a queued start cancelled).
    expect(runtimeText(agent({status: 'interrupted'}), NOW)).toBe('—')
    expect(runtimeText(agent({status: 'not_started'}), NOW)).toBe('—')
    expect(runtimeText(agent({status: 'stopped', error: 'sandbox unavailable'}), NOW)).toBe('—')
  })
})

describe('restartText and canResume', () => {
  it('says when a keep-alive agent restarts', () => {
    expect(restartText(agent({status: 'failed', nextRestartAt: at(-8)}), NOW)).toBe('restarting in 8 s')
    expect(restartText(agent({status: 'running', nextRestartAt: at(-8)}), NOW)).toBe('')
  })
  it('needs a session id and resume arguments', () => {
    expect(canResume(agent({status: 'stopped', sessionId: 's1', resumeArgs: ['--resume', '{sessionId}']}))).toBe(true)
    expect(canResume(agent({status: 'stopped', resumeArgs: ['--resume']}))).toBe(false)
    expect(canResume(agent({status: 'running', sessionId: 's1', resumeArgs: ['x']}))).toBe(false)
  })
})

describe('activityText and start errors', () => {
  it('reads the engine’s activity when it sends one', () => {
    expect(activityText(agent({status: 'running', activity: {state: 'busy', since: at(400), tool: 'Bash', toolSince: at(360)}}), NOW)).toBe('busy · Bash 6 min')
    expect(activityText(agent({status: 'running', activity: {state: 'silent', since: at(180)}}), NOW)).toBe('silent 3 min')
    expect(activityText(agent({status: 'running', activity: {state: 'working', since: at(10)}}), NOW)).toBe('working')
  })
  it('falls back to the last log growth', () => {
    expect(activityText(agent({status: 'running', lastActivityAt: at(5)}), NOW)).toBe('active')
    expect(activityText(agent({status: 'running', lastActivityAt: at(125)}), NOW)).toBe('silent 2 min')
    expect(activityText(agent({status: 'completed', lastActivityAt: at(125)}), NOW)).toBe('')
  })
  it('a start error stays on the row', () => {
    const v = statusView(agent({status: 'not_started', error: "Failed to start process 'c': not found"}))
    expect(v).toMatchObject({tone: 'bad', label: 'could not start', detail: "Failed to start process 'c': not found"})
  })
  it('a queued agent says its place', () => {
    expect(statusView(agent({status: 'queued', queuePosition: 2}))).toMatchObject({label: 'queued · 2nd'})
    expect(statusView(agent({status: 'queued', queuePosition: 1, queuedAction: 'unpause'})))
      .toMatchObject({label: 'queued · 1st', detail: 'to resume'})
  })
})

describe('briefDetail', () => {
  it('trims the engine’s long sentences for a row', () => {
    expect(briefDetail('Process exited with code 3')).toBe('exit code 3')
    expect(briefDetail(`Failed to start process 'c': exec: "claude": executable file not found in $PATH`)).toBe('claude not found on PATH')
    expect(briefDetail('exit code 0')).toBe('')
    expect(briefDetail('stopped by user')).toBe('stopped by user')
  })
})

describe('a start the machine cannot sandbox', () => {
  it('reads short on the row; the detail has the engine’s whole sentence', () => {
    const error = "Process 'web' is not started: sandbox unavailable: this machine lacks a network namespace, which takes the network away: operation not permitted"
    const a = agent({status: 'not_started', error})
    expect(statusView(a)).toMatchObject({label: 'could not start', detail: error})
    expect(briefDetail(error)).toBe('sandbox unavailable: this machine lacks a network namespace, which takes the network away: operation not permitted')
  })
})
