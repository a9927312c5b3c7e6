import {fireEvent, render, screen} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {describe, expect, it, vi} from 'vitest'
import {api} from '../../api'
import {agent} from '../../test/fixtures'
import {ReplyBox} from './ReplyBox'

vi.mock('../../api', async (orig) => ({
  ...(await orig<typeof import('../../api')>()),
  api: {agents: {send: vi.fn()}},
}))

const wrap = (ui: React.ReactNode) => render(<QueryClientProvider client={new QueryClient()}>{ui}</QueryClientProvider>)
const ended = agent({id: 'cc', projectId: 'p1', status: 'completed', profile: 'claude-stream-json', sessionId: 's1',
  resumeArgs: ['-p', '--resume', '{sessionId}', '--', 'continue']})

describe('ReplyBox', () => {
  it('sends a message with Ctrl+Enter or Send, and empties the box', async () => {
    vi.mocked(api.agents.send).mockResolvedValue({...ended, status: 'running'})
    wrap(<ReplyBox agent={ended}/>)
    const box = screen.getByLabelText('Message to cc')
    expect(screen.getByRole('button', {name: 'Send'})).toBeDisabled()
    fireEvent.change(box, {target: {value: 'now the tests'}})
    fireEvent.keyDown(box, {key: 'Enter', ctrlKey: true})
    await vi.waitFor(() => expect(api.agents.send).toHaveBeenCalledWith('p1', 'cc', 'now the tests'))
    await vi.waitFor(() => expect(box).toHaveValue(''))
  })
  it('says why it cannot be sent while it runs', () => {
    wrap(<ReplyBox agent={{...ended, status: 'running'}}/>)
    expect(screen.getByLabelText('Message to cc')).toBeDisabled()
    expect(screen.getByPlaceholderText(/running: reply once its run ended/)).toBeInTheDocument()
  })
  it('is not there for an agent that has no session to resume', () => {
    const {container} = wrap(<ReplyBox agent={{...ended, profile: ''}}/>)
    expect(container).toBeEmptyDOMElement()
  })
})
