import {render, screen} from '@testing-library/react'
import {describe, expect, it} from 'vitest'
import {currentMatch, SearchBar, step} from './search'

describe('log search count', () => {
  it('counts the first match as "1 / 1" at once, before any step', () => {
    expect(currentMatch(-1, 1)).toBe(0)
    render(<SearchBar value="boom" onChange={() => {}} onStep={() => {}} current={currentMatch(-1, 1)} total={1} label="Search the log"/>)
    expect(screen.getByText('1 / 1')).toBeInTheDocument()
  })

  it('starts at the latest match, steps from it, and keeps the current one in range', () => {
    expect(currentMatch(-1, 3)).toBe(2)
    expect(step(currentMatch(-1, 3), 3, 1)).toBe(0)
    expect(step(currentMatch(-1, 3), 3, -1)).toBe(1)
    expect(currentMatch(5, 3)).toBe(2) // fewer matches now
    expect(currentMatch(1, 3)).toBe(1)
    expect(currentMatch(0, 0)).toBe(-1)
  })
})
