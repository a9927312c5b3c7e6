import {beforeEach, describe, expect, it, vi} from 'vitest'
import * as App from '../../wailsjs/go/app/App'
import {api, ApiError, call, errorMessage} from '.'

vi.mock('../../wailsjs/go/app/App', () => ({Call: vi.fn()}))

describe('the typed client', () => {
  beforeEach(() => {
    vi.mocked(App.Call).mockReset()
  })

  it('calls an operation by its id with its parameters and body through the one binding', async () => {
    vi.mocked(App.Call).mockResolvedValue({id: 'web', status: 'running'})
    const rec = await call('startAgent', {project: 'p1', agent: 'web'})
    expect(rec.status).toBe('running')
    expect(App.Call).toHaveBeenCalledWith('startAgent', {project: 'p1', agent: 'web'}, '')
    await call('stopAgent', {project: 'p1', agent: 'web'}, {graceSec: 3})
    expect(App.Call).toHaveBeenLastCalledWith('stopAgent', {project: 'p1', agent: 'web'}, '{"graceSec":3}')
    await api.agents.stop('p1', 'web') // the agent's own grace: no body
    expect(App.Call).toHaveBeenLastCalledWith('stopAgent', {project: 'p1', agent: 'web'}, '')
  })

  it('turns the engine’s refusal into an ApiError with its kind, words and status', async () => {
    vi.mocked(App.Call).mockRejectedValue('{"status":409,"error":"AlreadyRunning","message":"Process \'web\' is already running"}')
    const err = await call('startAgent', {project: 'p1', agent: 'web'}).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect(err).toMatchObject({kind: 'AlreadyRunning', status: 409, message: "Process 'web' is already running"})
    expect(errorMessage(err)).toBe("Process 'web' is already running")
  })

  it('leaves any other failure as it is', async () => {
    vi.mocked(App.Call).mockImplementation(() => Promise.reject(new Error('the window is closing')))
    let other: unknown
    try {
      await call('listProjects')
    } catch (e) {
      other = e
    }
    expect(other instanceof ApiError).toBe(false)
    expect(errorMessage(other)).toBe('the window is closing')
  })

  it('answers null for what the engine is still loading, and [] for an empty list', async () => {
    vi.mocked(App.Call).mockRejectedValue('{"status":404,"error":"ProcessNotFound","message":"the engine is still loading its projects"}')
    expect(await api.projects.whileClosed()).toBeNull()
    vi.mocked(App.Call).mockResolvedValue(null)
    expect(await api.agents.list('p1')).toEqual([])
  })
})
