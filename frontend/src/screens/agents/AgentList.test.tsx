import {fireEvent, render, screen, within} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {describe, expect, it, vi} from 'vitest'
import type {Agent} from '../../api'
import {groupAgents} from '../../lib/groups'
import {agent, at, NOW} from '../../test/fixtures'
import {AgentList} from './AgentList'
import {columnsFor} from './columns'

vi.mock('../../api', async (orig) => ({...(await orig<typeof import('../../api')>()), api: {agents: {}}}))

const cells = () => Array.from(document.querySelectorAll('thead th')).map((th) => th.className)

function renderList(agents: Agent[], onSelect = vi.fn()) {
  render(
    <QueryClientProvider client={new QueryClient()}>
      <AgentList groups={groupAgents(agents, {key: 'default', desc: false}, NOW)} selectedId={null} onSelect={onSelect} now={NOW}/>
    </QueryClientProvider>,
  )
  return (id: string) => within(document.querySelector<HTMLElement>(`tr[data-agent="${id}"]`)!)
}

describe('AgentList', () => {
  it('shows one line per agent: name and id, status with its reason, activity, run time, runs, cost, one action', () => {
    const row = renderList([
      agent({id: 'web', name: 'Web server', status: 'running', pid: 4242, startedAt: at(90), lastActivityAt: at(120),
        restartCount: 2, autoResumeCount: 1, resumeCount: 1, totals: {runs: 4, costUsd: 0.4321}}),
      agent({id: 'tests', status: 'failed', exitReason: 'failed', exitCode: 3, error: 'Process exited with code 3',
        startedAt: at(300), stoppedAt: at(290)}),
    ])
    const web = row('web')
    expect(web.getByText('Web server')).toBeInTheDocument()
    expect(web.getByText('web')).toHaveClass('agent-id')
    expect(web.getByText('running')).toBeInTheDocument()
    expect(web.getByText('1 min 30 s')).toBeInTheDocument()
    expect(web.getByText('silent 2 min')).toBeInTheDocument()
    expect(web.getByText('$0.43')).toBeInTheDocument()
    expect(web.getByText(/^4/).closest('td')).toHaveAttribute('title', expect.stringContaining('2 keep-alive restarts'))
    expect(web.getByText(/1↻/)).toBeInTheDocument()
    expect(web.getByRole('button', {name: 'Stop'})).toBeInTheDocument()
    expect(web.getByRole('button', {name: 'More actions for web'})).toBeInTheDocument()
    const tests = row('tests')
    expect(tests.getByText('failed').closest('.status')).toHaveClass('tone-bad')
    expect(tests.getByText('exit code 3')).toBeInTheDocument()
    expect(tests.getByText('exit code 3').closest('td')).toHaveAttribute('title', expect.stringContaining('Process exited with code 3'))
    expect(tests.getByText('10 s')).toBeInTheDocument()
    expect(tests.getByRole('button', {name: 'Start'})).toHaveAttribute('title', expect.stringMatching(/new run/))
    // Exact times on hover.
    expect(tests.getByText(/ago/).closest('td')!.title).toMatch(/Started .*\nEnded /)
  })

  it('waiting: for the user in the attention colour and in Needs you; a rate limit calm, with its end; a crash loop with its next try', () => {
    const row = renderList([
      agent({id: 'ask', status: 'running', startedAt: at(60),
        activity: {state: 'waiting', waiting: 'permission for Bash', needsYou: true, since: at(3)}}),
      agent({id: 'limited', status: 'running', startedAt: at(60),
        activity: {state: 'waiting', waiting: 'rate limit', needsYou: false, until: at(-180)}}),
      agent({id: 'ka', status: 'failed', keepAlive: true, desired: 'running', restartFailureCount: 5, nextRestartAt: at(-32),
        exitReason: 'failed', exitCode: 1}),
      agent({id: 'acked', status: 'failed', keepAlive: true, desired: 'running', restartFailureCount: 7, nextRestartAt: at(-60),
        exitReason: 'failed', exitCode: 1, acknowledgedAt: at(120), attention: ''}),
    ])
    const ask = document.querySelector('tr[data-agent="ask"] [data-waiting]')!
    expect(ask).toHaveTextContent(/^waiting: permission for Bash$/)
    expect(ask).toHaveClass('waiting', 'needs-you')
    expect(ask.closest('tbody')).toHaveAttribute('data-group', 'attention')
    expect(row('ask').getByText('waiting 3 s').closest('td')).toHaveClass('act-you')
    const limited = document.querySelector('tr[data-agent="limited"] [data-waiting]')!
    expect(limited).toHaveTextContent(/^waiting: rate limit until /)
    expect(limited).toHaveClass('waiting', 'calm')
    expect(limited.closest('tbody')).toHaveAttribute('data-group', 'working')
    expect(limited.closest('td')).toHaveAttribute('title', expect.stringContaining('in 3 min'))
    const ka = row('ka').getByText('crash loop ×5 · retry in 32 s')
    expect(ka.closest('tbody')).toHaveAttribute('data-group', 'attention')
    // Acknowledged: out of Needs you, still counted in its row.
    const acked = row('acked').getByText('crash loop ×7 · retry in 60 s')
    expect(acked).toHaveAttribute('data-crash-loop', 'acknowledged')
    expect(acked.closest('tbody')).not.toHaveAttribute('data-group', 'attention')
  })

  it('a never-run agent reads "—" for run time, last run and runs; runs count what the events show, never fewer than the record proves', () => {
    render(
      <QueryClientProvider client={new QueryClient()}>
        <AgentList groups={groupAgents([
          agent({id: 'new', status: 'not_started'}),
          agent({id: 'bad', status: 'stopped', error: "Process 'bad' is not started: sandbox unavailable: no Landlock"}),
          agent({id: 'twice', status: 'completed', exitReason: 'completed', exitCode: 0, startedAt: at(100), stoppedAt: at(90)}),
          agent({id: 'claude', status: 'completed', startedAt: at(100), stoppedAt: at(90), totals: {runs: 1}, restartCount: 2}),
        ], {key: 'default', desc: false}, NOW)} selectedId={null} onSelect={vi.fn()} now={NOW} runs={{twice: 2, claude: 1}}/>
      </QueryClientProvider>,
    )
    const cell = (id: string, c: string) => document.querySelector(`tr[data-agent="${id}"] td.c-${c}`)!
    for (const id of ['new', 'bad']) {
      for (const c of ['runtime', 'when', 'runs']) expect(cell(id, c)).toHaveTextContent(/^—$/)
      expect(cell(id, 'runs')).toHaveAttribute('title', 'Never run')
    }
    expect(cell('twice', 'runs')).toHaveTextContent(/^2$/) // started twice by hand: the record counts neither
    expect(cell('claude', 'runs')).toHaveTextContent(/^3$/) // 1 reported figures, 2 keep-alive restarts
  })

  it('groups: what needs you first, with counts', () => {
    renderList([
      agent({id: 'idle1', status: 'completed', exitReason: 'completed', exitCode: 0}),
      agent({id: 'busy1', status: 'running'}),
      agent({id: 'bad1', status: 'failed', exitReason: 'failed', exitCode: 1}),
      agent({id: 'bad2', status: 'not_started', error: 'Failed to start process: not found'}),
    ])
    const heads = screen.getAllByRole('row', {expanded: true}).map((b) => b.textContent)
    expect(heads).toEqual(['▾ Needs you2', '▾ Working1', '▾ Idle1'])
    const ids = Array.from(document.querySelectorAll('tr[data-agent]')).map((r) => r.getAttribute('data-agent'))
    expect(ids.slice(0, 2).sort()).toEqual(['bad1', 'bad2'])
    expect(ids.slice(2)).toEqual(['busy1', 'idle1'])
  })

  it('renders exit reasons: completed, exited while closed, orphaned, re-attached, restarting, stale', () => {
    const row = renderList([
      agent({id: 'done', status: 'completed', exitReason: 'completed', exitCode: 0}),
      agent({id: 'away', status: 'interrupted', exitReason: 'exited_while_app_closed', startedAt: at(999)}),
      agent({id: 'away2', status: 'failed', exitReason: 'exited_while_app_closed', exitCode: 7}),
      agent({id: 'lost', status: 'interrupted', exitReason: 'orphaned'}),
      agent({id: 'adopted', status: 'running', attached: false, startedAt: at(60)}),
      agent({id: 'loop', status: 'failed', keepAlive: true, desired: 'running', restartFailureCount: 1, nextRestartAt: at(-8)}),
      agent({id: 'quiet', status: 'running', stale: true, startedAt: at(900)}),
    ])
    expect(row('done').getByText('✔').closest('.status')).toHaveClass('tone-ok')
    expect(row('away').getByText('exited while Shepherd was closed — reason unknown')).toBeInTheDocument()
    expect(row('away').getByText('⚠')).toBeInTheDocument()
    expect(row('away').getByText('unknown')).toBeInTheDocument()
    expect(row('away2').getByText('exited while Shepherd was closed — exit code 7')).toBeInTheDocument()
    expect(row('lost').getByText('process vanished — detected by watchdog')).toBeInTheDocument()
    expect(row('adopted').getByText('re-attached')).toBeInTheDocument()
    expect(row('done').queryByText('re-attached')).toBeNull()
    expect(row('loop').getByText('restarting in 8 s')).toBeInTheDocument()
    // A keep-alive agent waiting to restart can be stopped from its row.
    expect(row('loop').getByRole('button', {name: 'Stop'})).toHaveAttribute('title', 'Cancel the pending keep-alive restart')
    expect(row('quiet').getByText('stale')).toHaveClass('badge')
    expect(row('adopted').queryByText('stale')).toBeNull()
  })

  it('selects an agent on click; the row menu holds the other actions', () => {
    const onSelect = vi.fn()
    renderList([agent({id: 'web', status: 'stopped', sessionId: 's1', resumeArgs: ['--resume', '{sessionId}']})], onSelect)
    screen.getByText('web').click()
    expect(onSelect).toHaveBeenCalledWith('web')
    expect(screen.getByRole('button', {name: 'Resume'})).toHaveAttribute('title', expect.stringContaining('s1'))
    fireEvent.click(screen.getByRole('button', {name: 'More actions for web'}))
    const items = screen.getAllByRole('menuitem').map((m) => m.textContent)
    expect(items).toEqual(['Start', 'Edit', 'Remove…', 'Copy id'])
    expect(onSelect).toHaveBeenCalledTimes(1)
  })

  it('pause and the queue: a running agent pauses from its menu, a paused one resumes (unpauses), a queued one says its place and cancels', () => {
    const row = renderList([
      agent({id: 'web', status: 'running', startedAt: at(90)}),
      agent({id: 'napping', status: 'paused', pausedAt: at(60), pauseNote: 'rate limit', pausedWithProject: true,
        sessionId: 's1', resumeArgs: ['--resume', '{sessionId}'], stoppedAt: at(60)}),
      agent({id: 'waiting', status: 'queued', queuePosition: 2, queuedAction: 'start'}),
    ])
    fireEvent.click(row('web').getByRole('button', {name: 'More actions for web'}))
    expect(screen.getAllByRole('menuitem').map((m) => m.textContent)).toContain('Pause')
    fireEvent.keyDown(window, {key: 'Escape'})
    expect(row('napping').getByText('paused')).toBeInTheDocument()
    expect(row('napping').getByText('rate limit')).toBeInTheDocument()
    expect(row('napping').getByRole('button', {name: 'Resume'})).toHaveAttribute('title', expect.stringContaining('where it paused'))
    expect(row('waiting').getByText('queued · 2nd')).toBeInTheDocument()
    expect(row('waiting').getByRole('button', {name: 'Cancel'})).toHaveAttribute('title', expect.stringContaining('out of the queue'))
    expect(document.querySelector('tr[data-agent="waiting"]')!.closest('tbody')).toHaveAttribute('data-group', 'working')
    expect(document.querySelector('tr[data-agent="napping"]')!.closest('tbody')).toHaveAttribute('data-group', 'idle')
  })
  it('a sandboxed agent has a lock whose tooltip says its grants in words', () => {
    const row = renderList([
      agent({id: 'boxed', sandbox: {network: true, writeDirs: ['/src/app', '/tmp/out'], permissions: ['@network', '@write:/src/app', '@write:/tmp/out']}}),
      agent({id: 'tight', sandbox: {network: false, writeDirs: [], permissions: []}}),
      agent({id: 'free'}),
    ])
    const lock = document.querySelector('tr[data-agent="boxed"] [data-sandboxed]')!
    expect(lock).toHaveAttribute('title', 'Sandboxed: reads any file\nNetwork: allowed\nWrites: its log, and in /src/app, /tmp/out (and below)')
    expect(document.querySelector('tr[data-agent="tight"] [data-sandboxed]'))
      .toHaveAttribute('title', 'Sandboxed: reads any file\nNetwork: none\nWrites: only its own log')
    expect(row('free').queryByTitle(/Sandboxed/)).toBeNull()
  })
  it('says which agent created an agent (the user\'s own say nothing)', () => {
    renderList([agent({id: 'dev', parent: 'claude-1', sandbox: {network: false, writeDirs: [], permissions: []}}), agent({id: 'claude-1'})])
    const by = document.querySelector('tr[data-agent="dev"] [data-parent]')!
    expect(by).toHaveTextContent('by claude-1')
    expect(by).toHaveAttribute('title', 'created by agent claude-1, which controls it')
    expect(document.querySelector('tr[data-agent="claude-1"] [data-parent]')).toBeNull()
  })

  it('hides the cost column when no agent reports a cost, and CPU and memory when none runs', () => {
    renderList([agent({id: 'a', status: 'completed', totals: {runs: 1, turns: 2}}), agent({id: 'b'})])
    expect(cells()).toEqual(['c-agent', 'c-status', 'c-activity', 'c-runtime', 'c-when', 'c-runs', 'c-actions'])
    expect(document.querySelector('td.c-cost, td.c-cpu, td.c-mem')).toBeNull()
    expect(document.querySelector('.group-row th')).toHaveAttribute('colspan', '7')
  })

  it('CPU and memory for running agents, blank for the others; cost once one reports it', () => {
    const row = renderList([
      agent({id: 'busy', status: 'running', startedAt: at(60),
        stats: {cpuPercent: 42.4, rssBytes: 85 * 1048576, processes: 3, sampledAt: at(1)}}),
      agent({id: 'fresh', status: 'running', startedAt: at(1)}),
      agent({id: 'done', status: 'completed', totals: {runs: 2, costUsd: 1.5}, stats: {cpuPercent: 5, rssBytes: 1000}}),
    ])
    expect(cells()).toEqual(['c-agent', 'c-status', 'c-activity', 'c-runtime', 'c-when', 'c-runs', 'c-cost', 'c-cpu', 'c-mem', 'c-actions'])
    expect(row('busy').getByText('42%')).toHaveClass('c-cpu')
    expect(row('busy').getByText('85M')).toHaveAttribute('title', expect.stringContaining('Memory 85 MiB resident\n3 processes'))
    expect(document.querySelector('tr[data-agent="fresh"] td.c-cpu')).toHaveTextContent('')
    expect(document.querySelector('tr[data-agent="fresh"] td.c-cpu')).toHaveAttribute('title', 'Not sampled yet')
    expect(document.querySelector('tr[data-agent="done"] td.c-cpu')).toHaveTextContent('')
    expect(document.querySelector('tr[data-agent="done"] td.c-mem')).toHaveAttribute('title', 'Not running')
    expect(row('done').getByText('$1.50')).toHaveClass('c-cost')
    expect(document.querySelector('tr[data-agent="busy"] td.c-cost')).toHaveTextContent('—')
  })
})

describe('AgentList focus', () => {
  it('keeps the focus with a row whose Stop turned into a disabled Stopping… and which then moved to another group', () => {
    const client = new QueryClient()
    const list = (status: Agent['status']) => (
      <QueryClientProvider client={client}>
        <AgentList groups={groupAgents([agent({id: 'k', status, startedAt: at(60)}), agent({id: 'other', status: 'failed', exitCode: 2})],
          {key: 'default', desc: false}, NOW)} selectedId={null} cursorId="k" onSelect={vi.fn()} now={NOW}/>
      </QueryClientProvider>
    )
    const {rerender} = render(list('running'))
    const stop = within(document.querySelector<HTMLElement>('tr[data-agent="k"]')!).getByRole('button', {name: 'Stop'})
    stop.focus()
    rerender(list('stopping'))
    // The page drops the focus of a button that is disabled (jsdom does not: as a browser does it).
    const stopping = within(document.querySelector<HTMLElement>('tr[data-agent="k"]')!).getByRole('button', {name: 'Stopping…'})
    expect(stopping).toBeDisabled()
    stopping.blur()
    expect(document.activeElement).toBe(document.body)
    rerender(list('stopped'))
    expect(document.activeElement).toBe(document.querySelector('tr[data-agent="k"]'))
  })
})

describe('columnsFor', () => {
  it('in a narrow window, Last run makes room for CPU and memory', () => {
    expect(columnsFor({cost: true, stats: true}, true)).toEqual(['agent', 'status', 'activity', 'runtime', 'runs', 'cost', 'cpu', 'mem', 'actions'])
    expect(columnsFor({cost: false, stats: false}, true)).toEqual(['agent', 'status', 'activity', 'runtime', 'when', 'runs', 'actions'])
    expect(columnsFor({cost: false, stats: true}, false)).toContain('when')
    // A wide cost column ("$0.0003 / $0.0002") takes Last run's room in a narrow window, not the names'.
    expect(columnsFor({cost: true, stats: false}, true, true)).not.toContain('when')
    expect(columnsFor({cost: true, stats: false}, false, true)).toContain('when')
  })
})
