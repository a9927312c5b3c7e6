import {describe, expect, it} from 'vitest'
import {at, NOW} from '../test/fixtures'
import {cpuText, figureRows, figuresText, memText, money} from './usage'

describe('usage', () => {
  it('formats CPU, memory and money short', () => {
    expect([cpuText(0.01), cpuText(0.42), cpuText(9.4), cpuText(42.4), cpuText(180), cpuText(null)]).toEqual(['0%', '0.4%', '9.4%', '42%', '180%', ''])
    expect([memText(640 * 1024), memText(85 * 1048576), memText(1.25 * 1073741824), memText(undefined)]).toEqual(['640K', '85M', '1.3G', ''])
    expect([money(0.0123), money(12.4), money(null)]).toEqual(['$0.0123', '$12.40', ''])
    // The precision an amount needs, as the engine and the CLI write it.
    expect([0, 0.0002, 0.00025, 0.123456, 0.5, 5, 5.12, 1234.5678, 0.0000001, -0.0002].map(money))
      .toEqual(['$0.00', '$0.0002', '$0.00025', '$0.123', '$0.50', '$5.00', '$5.12', '$1234.57', '$0.00', '-$0.0002'])
  })

  it('puts a run’s figures in words', () => {
    expect(figuresText({turns: 3, durationMs: 1234, costUsd: 0.0123, inputTokens: 420, cachedInputTokens: 300, outputTokens: 50}))
      .toBe('3 turns, 1 s, $0.0123, 420 in, 300 cached, 50 out tokens')
    expect(figuresText({runs: 1})).toBe('1 run')
  })

  it('lays out the latest run against all runs; a cost not reported says so', () => {
    const rows = figureRows({turns: 2, durationMs: 61_000, inputTokens: 12_345, cachedInputTokens: 800, outputTokens: 50, reasoningOutputTokens: 20},
      {runs: 2, turns: 5, durationMs: 90_000, inputTokens: 20_000, cachedInputTokens: 1600, outputTokens: 100, reasoningOutputTokens: 40})
    expect(rows).toEqual([
      ['Turns', '2', '5'], ['Duration', '1 min 01 s', '1 min 30 s'], ['Cost', 'not reported', 'not reported'],
      ['Input tokens', '12k', '20k'], ['Cached input tokens', '800', '1.6k'], ['Output tokens', '50', '100'], ['Reasoning tokens', '20', '40'],
    ])
  })
})
