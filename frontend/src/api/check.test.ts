import {describe, expect, it} from 'vitest'
import {eventProblems} from '.'
import {agent} from '../test/fixtures'

describe('pushed events are checked against the engine’s description', () => {
  it('lets a payload as the engine sends it through, and more fields than it knows', () => {
    expect(eventProblems('agent:state', agent({id: 'web', status: 'running', pid: 4}))).toEqual([])
    expect(eventProblems('agent:state', {...agent(), fromANewerEngine: {x: 1}})).toEqual([])
    expect(eventProblems('agent:removed', {projectId: 'p1', agentId: 'web'})).toEqual([])
    expect(eventProblems('engine:alerts', [{kind: 'low-space', message: 'm', freeBytes: 1, totalBytes: 2, since: 'x'}])).toEqual([])
    expect(eventProblems('engine:alerts', null)).toEqual([]) // a Go nil list
  })

  it('says what is missing or of the wrong type, nested too', () => {
    expect(eventProblems('agent:state', {status: 'failed'})).toContain('$.id: missing')
    expect(eventProblems('agent:state', {...agent(), pid: 'four'})).toEqual(['$.pid: string, want integer'])
    expect(eventProblems('agent:state', {...agent(), args: [1]})).toEqual(['$.args[0]: integer, want string'])
    expect(eventProblems('agent:state', {...agent(), activity: {since: 'now'}})).toEqual(['$.activity.state: missing'])
    expect(eventProblems('agent:stats', {projectId: 'p1', at: 'x', agents: {web: {rssBytes: 'lots'}}}))
      .toEqual(expect.arrayContaining(['$.agents.web.rssBytes: string, want integer']))
    expect(eventProblems('agent:removed', 'web')).toEqual(['$: string, want object'])
  })

  it('does not check the window’s own events', () => {
    expect(eventProblems('engine:status', {anything: true})).toEqual([])
  })
})
