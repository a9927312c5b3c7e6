import {describe, expect, it} from 'vitest'
import {joinArgs, looksSecret, splitArgs} from './args'

describe('args', () => {
  it('splits like a shell and joins back', () => {
    const args = ['-p', '--verbose', 'fix the tests', "it's", '']
    expect(splitArgs(joinArgs(args))).toEqual(args)
    expect(splitArgs(`-c "echo hi; exit 3"`)).toEqual(['-c', 'echo hi; exit 3'])
  })
  it('knows secret-looking keys', () => {
    expect(looksSecret('ANTHROPIC_API_KEY')).toBe(true)
    expect(looksSecret('GITHUB_TOKEN')).toBe(true)
    expect(looksSecret('PATH')).toBe(false)
  })
})
