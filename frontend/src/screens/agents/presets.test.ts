import {describe, expect, it} from 'vitest'
import {splitPrompt, withModel, withoutModel, withPrompt} from './presets'

describe('presets', () => {
  it('Codex: the prompt is the last argument, unless that is an option or the subcommand', () => {
    expect(splitPrompt('codex-json', ['exec', '--json', '-m', 'o3', 'fix it'])).toEqual({args: ['exec', '--json'], prompt: 'fix it', model: 'o3', mcp: ''})
    expect(splitPrompt('codex-json', ['exec', '--json', '--full-auto'])).toMatchObject({args: ['exec', '--json', '--full-auto'], prompt: ''})
    expect(splitPrompt('codex-json', ['exec'])).toMatchObject({args: ['exec'], prompt: ''})
  })

  it('Codex: the model goes before `resume`, and comes out again', () => {
    const resume = withModel('codex-json', ['exec', '--json', 'resume', '{sessionId}', 'continue'], 'o3')
    expect(resume).toEqual(['exec', '--json', '-m', 'o3', 'resume', '{sessionId}', 'continue'])
    expect(withoutModel('codex-json', resume, 'o3')).toEqual(['exec', '--json', 'resume', '{sessionId}', 'continue'])
    expect(withPrompt('codex-json', ['exec', '--json'], '', '')).toEqual(['exec', '--json'])
  })

  it('Claude: Shepherd’s tools before the model and the prompt; a model already there is kept', () => {
    expect(withPrompt('claude-stream-json', ['-p'], 'go', 'opus', '{}')).toEqual(['-p', '--mcp-config', '{}', '--model', 'opus', '--', 'go'])
    expect(withModel('claude-stream-json', ['--model', 'x', '--', 'continue'], 'opus')).toEqual(['--model', 'x', '--', 'continue'])
    expect(splitPrompt('claude-stream-json', ['-p', '--mcp-config', '{}', '--model', 'opus', '--', 'go']))
      .toEqual({args: ['-p'], prompt: 'go', model: 'opus', mcp: '{}'})
  })
})
