import {render, screen} from '@testing-library/react'
import {describe, expect, it, vi} from 'vitest'
import {parseStreamLine} from './streamJson'
import {StreamView} from './StreamView'

const LOG = [
  '{"type":"system","subtype":"init","session_id":"abc-123","model":"claude-sonnet","cwd":"/src/app"}',
  '{"type":"assistant","message":{"content":[{"type":"text","text":"I will run the tests."},{"type":"tool_use","name":"Bash","input":{"command":"npm test"}}]}}',
  '{"type":"user","message":{"content":[{"type":"tool_result","content":"3 passed","is_error":false}]}}',
  'not json at all',
  '{"type":"result","subtype":"success","is_error":false,"session_id":"abc-123","duration_ms":65000,"num_turns":4,"total_cost_usd":0.1234,"result":"All tests pass."}',
]

describe('stream-json', () => {
  it('renders assistant text, tool calls and the result line', () => {
    render(<StreamView lines={LOG}/>)
    expect(screen.getByText('abc-123', {selector: '.st-init code'})).toBeInTheDocument()
    expect(screen.getByText('I will run the tests.')).toBeInTheDocument()
    expect(screen.getByText('⚙ Bash')).toBeInTheDocument()
    expect(screen.getByText('{"command":"npm test"}')).toBeInTheDocument()
    expect(screen.getByText('3 passed')).toBeInTheDocument()
    expect(screen.getByText('not json at all')).toBeInTheDocument()
    const result = screen.getByRole('status')
    expect(result).toHaveClass('ok')
    expect(result).toHaveTextContent('✔ Finished')
    expect(result).toHaveTextContent('4 turns')
    expect(result).toHaveTextContent('1 min 05 s')
    expect(result).toHaveTextContent('$0.123')
    expect(result).toHaveTextContent('session abc-123')
    expect(result).toHaveTextContent('All tests pass.')
  })

  it('an error result is an error, judged by the parsed line', () => {
    const [r] = parseStreamLine('{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":30}')
    expect(r).toMatchObject({kind: 'result', ok: false, subtype: 'error_max_turns', turns: 30})
    // The word "error" inside a successful result does not make it one.
    const [ok] = parseStreamLine('{"type":"result","subtype":"success","is_error":false,"result":"fixed the error"}')
    expect(ok).toMatchObject({kind: 'result', ok: true})
  })

  it('marks each run and highlights a search, the current match apart', () => {
    const run = (n: number, cause: string, prevEnd?: string) => ({n, startedAt: '2026-05-01T12:00:00Z', cause, prevEnd, sessionId: `sess-${n}aaaaaaaa`})
    const two = [...LOG, ...LOG]
    const onMatches = vi.fn()
    render(<StreamView lines={two} search="tests" current={0} onMatches={onMatches}
      markers={[{run: run(1, 'started by you'), line: 0}, {run: run(2, 'auto-resumed after 5 min silent', 'silent too long; killed'), line: 5}]}/>)
    const marks = screen.getAllByRole('separator')
    expect(marks.map((m) => m.getAttribute('aria-label'))).toEqual([
      'Run 1 · started by you · session sess-1aa…',
      'Run 2 · auto-resumed after 5 min silent · session sess-2aa…',
    ])
    expect(marks[1]).toHaveTextContent('the run before: silent too long; killed')
    // The second marker comes after the first run's result and before the second run's session line.
    const order = Array.from(document.querySelectorAll('.run-marker, .st-result')).map((e) => e.className.split(' ')[0])
    expect(order).toEqual(['run-marker', 'st-result', 'run-marker', 'st-result'])
    expect(onMatches).toHaveBeenLastCalledWith(4)
    expect(document.querySelectorAll('mark')).toHaveLength(4)
    expect(document.querySelectorAll('mark.current')).toHaveLength(1)
  })

  it('says when there is nothing yet', () => {
    render(<StreamView lines={[]}/>)
    expect(screen.getByText('Nothing in the log yet.')).toBeInTheDocument()
  })
})
