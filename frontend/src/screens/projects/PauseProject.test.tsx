import {render, screen} from '@testing-library/react'
import {QueryClient, QueryClientProvider} from '@tanstack/react-query'
import {describe, expect, it, vi} from 'vitest'
import type {Project} from '../../api'
import {at, project as fixture, type Patch} from '../../test/fixtures'
import {useUI} from '../../state/ui'
import {PauseBanner} from './PauseProject'

vi.mock('../../api', async (orig) => ({
  ...(await orig<typeof import('../../api')>()),
  api: {agents: {list: vi.fn(() => Promise.resolve([]))}, projects: {unpause: vi.fn()}},
}))

const project = (patch: Patch<Project>): Project => fixture({name: 'app', path: '/src/app', createdAt: at(9999), ...patch})

function renderBanner(p: Project) {
  return render(<QueryClientProvider client={new QueryClient()}><PauseBanner project={p}/></QueryClientProvider>)
}

describe('PauseBanner', () => {
  it('is absent on a project that is not paused', () => {
    const {container} = renderBanner(project({paused: false}))
    expect(container).toBeEmptyDOMElement()
  })
  it('says since when, the note and the signal file’s problem, with Unpause', () => {
    renderBanner(project({paused: true, pausedAt: new Date(Date.now() - 120_000).toISOString(), pauseNote: 'rate limit',
      pauseProblem: '/data/p1/pause_signal is not a regular file (d); the project is paused until it is removed'}))
    const banner = screen.getByRole('status', {name: 'Project paused'})
    expect(banner).toHaveTextContent(/Paused \d+ min ago/)
    expect(banner).toHaveTextContent('“rate limit”')
    expect(screen.getByRole('alert')).toHaveTextContent('is not a regular file')
    expect(screen.getByRole('button', {name: 'Unpause'})).toBeEnabled()
  })
  it('shows a pause under way before the engine says paused', () => {
    useUI.getState().setPausing('p1', ['a', 'b'])
    renderBanner(project({paused: false}))
    expect(screen.getByRole('status', {name: 'Project paused'})).toHaveTextContent('Pausing 2 agents… 2 paused')
    useUI.getState().setPausing('p1', null)
  })
})
