import {act, render, screen} from '@testing-library/react'
import {beforeEach, describe, expect, it, vi} from 'vitest'
import {api, type Stats} from '../../api'
import {agent, at} from '../../test/fixtures'
import {RecordFields} from './RecordFields'
import {UsagePanel} from './UsagePanel'
import {UsageNow, UsageStrip} from './UsageStrip'
import {mergeSamples, useStatsHistory} from './useStatsHistory'

let pushStats: ((b: unknown) => void) | null = null
vi.mock('../../api', async (orig) => ({
  ...(await orig<typeof import('../../api')>()),
  api: {agents: {statsHistory: vi.fn()}},
  onEvent: (_name: string, h: (b: unknown) => void) => {
    pushStats = h
    return () => { pushStats = null }
  },
}))

const sample = (secondsAgo: number, cpuPercent: number, mb: number): Stats =>
  ({cpuPercent, rssBytes: mb * 1048576, processes: 2, sampledAt: at(secondsAgo)})

function History({a}: {a: ReturnType<typeof agent>}) {
  const samples = useStatsHistory(a)
  return <UsagePanel agent={a} samples={samples}/>
}

describe('usage in the detail', () => {
  beforeEach(() => {
    vi.mocked(api.agents.statsHistory).mockReset().mockResolvedValue([sample(6, 10, 80), sample(4, 30, 90)])
  })

  it('charts the run’s CPU and memory: the history, then each pushed sample', async () => {
    const a = agent({status: 'running', startedAt: at(60)})
    render(<History a={a}/>)
    expect(await screen.findByRole('img', {name: 'CPU over the last minutes'})).toBeInTheDocument()
    expect(api.agents.statsHistory).toHaveBeenCalledWith('p1', 'build')
    expect(screen.getByText('Memory').parentElement).toHaveTextContent('Memory 90 MiB · peak 90 MiB')
    act(() => pushStats!({projectId: 'p1', at: at(2), agents: {build: sample(2, 55, 120), other: sample(2, 1, 1)}}))
    expect(screen.getByText('CPU').parentElement).toHaveTextContent('CPU 55% · peak 55%')
    expect(screen.getByText('Memory').parentElement).toHaveTextContent('Memory 120 MiB')
  })

  it('says why there is no chart', () => {
    render(<UsagePanel agent={agent({status: 'completed'})} samples={[]}/>)
    expect(screen.getByText(/Not running\. CPU and memory are sampled every 2 s/)).toBeInTheDocument()
    expect(screen.getByText(/No run has reported figures yet/)).toBeInTheDocument()
  })

  it('the latest run’s figures against all runs', () => {
    render(<UsagePanel agent={agent({status: 'completed',
      lastResult: {turns: 3, durationMs: 1234, costUsd: 0.0123, inputTokens: 420, cachedInputTokens: 300, outputTokens: 50},
      totals: {runs: 2, turns: 6, durationMs: 2468, costUsd: 0.0246, inputTokens: 840, cachedInputTokens: 600, outputTokens: 100}})} samples={[]}/>)
    expect(screen.getByRole('columnheader', {name: 'All runs · 2 reported'})).toBeInTheDocument()
    expect(screen.getByRole('row', {name: 'Cost $0.0123 $0.0246'})).toBeInTheDocument()
    expect(screen.getByRole('row', {name: 'Turns 3 6'})).toBeInTheDocument()
  })

  it('a one-line strip with the latest run and all runs’ cost; CPU and memory in the head while it runs', () => {
    const onOpen = vi.fn()
    const a = agent({status: 'running', stats: sample(1, 12.5, 85), lastResult: {runs: 1, turns: 3, costUsd: 0.0123},
      totals: {runs: 2, costUsd: 0.0246}})
    render(<><UsageStrip agent={a} onOpen={onOpen}/><UsageNow agent={a} samples={[sample(3, 10, 80), sample(1, 12.5, 85)]} onOpen={onOpen}/></>)
    const strip = screen.getByRole('button', {name: /Latest run/})
    expect(strip).toHaveTextContent('Latest run 3 turns, $0.0123 · all 2 runs, $0.0246')
    strip.click()
    expect(screen.getByRole('button', {name: /CPU/})).toHaveTextContent('CPU 13%Mem 85M')
    expect(onOpen).toHaveBeenCalled()
  })

  it('nothing for an agent with nothing to show', () => {
    const {container} = render(<><UsageStrip agent={agent()} onOpen={vi.fn()}/><UsageNow agent={agent({stats: sample(1, 1, 1)})} samples={[]} onOpen={vi.fn()}/></>)
    expect(container).toBeEmptyDOMElement()
  })

  it('keeps samples once each, oldest first, at most five minutes’ worth', () => {
    const many = Array.from({length: 200}, (_, i) => sample(400 - i * 2, i, 1))
    const merged = mergeSamples(many, [many[199]])
    expect(merged).toHaveLength(150)
    expect(merged.at(-1)).toEqual(many[199])
  })
})

describe('RecordFields', () => {
  it('shows the grants in words and the tags; an unsandboxed agent says so', () => {
    const {unmount} = render(<RecordFields agent={agent({sandbox: {network: false, writeDirs: ['/src/app'], permissions: ['@write:/src/app']}})}/>)
    const field = document.querySelector('[data-grants]')!
    expect(field).toHaveTextContent('Sandboxed: reads any file.Network: none.Writes: its own log, and in /src/app and below.Tags: @write:/src/app')
    unmount()
    render(<RecordFields agent={agent()}/>)
    expect(screen.getByText(/not sandboxed/)).toBeInTheDocument()
  })
})
