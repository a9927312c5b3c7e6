import {render, screen, within} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {describe, expect, it, vi} from 'vitest'
import type {Agent} from '../../api'
import {agent, at, NOW} from '../../test/fixtures'
import {AgentList} from './AgentList'

vi.mock('../../api', async (orig) => ({...(await orig<typeof import('../../api')>()), api: {agents: {}}}))

function renderList(agents: Agent[], onSelect = vi.fn()) {
  render(
    <QueryClientProvider client={new QueryClient()}>
      <AgentList agents={agents} selectedId={null} onSelect={onSelect} now={NOW}/>
    </QueryClientProvider>,
  )
  return (id: string) => within(document.querySelector<HTMLElement>(`tr[data-agent="${id}"]`)!)
}

describe('AgentList', () => {
  it('shows one row per agent with its fields', () => {
    const row = renderList([
      agent({id: 'web', status: 'running', pid: 4242, startedAt: at(90), lastActivityAt: at(120),
        restartCount: 2, autoResumeCount: 1}),
      agent({id: 'tests', status: 'failed', exitReason: 'failed', exitCode: 3, error: 'Process exited with code 3',
        startedAt: at(300), stoppedAt: at(290)}),
    ])
    expect(screen.getAllByRole('row')).toHaveLength(3)
    const web = row('web')
    expect(web.getByText('running')).toBeInTheDocument()
    expect(web.getByText('4242')).toBeInTheDocument()
    expect(web.getByText('1 min 30 s')).toBeInTheDocument()
    expect(web.getByText('2 min ago')).toBeInTheDocument()
    expect(web.getByText('2 / 1')).toBeInTheDocument()
    expect(web.getByRole('button', {name: 'Stop'})).toBeInTheDocument()
    const tests = row('tests')
    expect(tests.getByText('failed').closest('.status')).toHaveClass('tone-bad')
    expect(tests.getByText('Process exited with code 3')).toBeInTheDocument()
    expect(tests.getByText('3')).toBeInTheDocument()
    expect(tests.getByText('10 s')).toBeInTheDocument()
    expect(tests.getByRole('button', {name: 'Start'})).toBeInTheDocument()
  })

  it('renders exit reasons: completed, exited while closed, orphaned, re-attached', () => {
    const row = renderList([
      agent({id: 'done', status: 'completed', exitReason: 'completed', exitCode: 0}),
      agent({id: 'away', status: 'interrupted', exitReason: 'exited_while_app_closed', startedAt: at(999)}),
      agent({id: 'away2', status: 'failed', exitReason: 'exited_while_app_closed', exitCode: 7}),
      agent({id: 'lost', status: 'interrupted', exitReason: 'orphaned'}),
      agent({id: 'adopted', status: 'running', attached: false, startedAt: at(60)}),
      agent({id: 'loop', status: 'failed', keepAlive: true, nextRestartAt: at(-8)}),
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
    expect(row('quiet').getByText('stale')).toHaveClass('badge')
    expect(row('adopted').queryByText('stale')).toBeNull()
  })

  it('selects an agent on click', () => {
    const onSelect = vi.fn()
    renderList([agent({id: 'web'})], onSelect)
    screen.getByText('web').click()
    expect(onSelect).toHaveBeenCalledWith('web')
  })
})
