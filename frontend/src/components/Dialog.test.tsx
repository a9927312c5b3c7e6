import {fireEvent, render, screen} from '@testing-library/react'
import {describe, expect, it, vi} from 'vitest'
import {Dialog} from './Dialog'

function Form({onClose, guard}: {onClose: () => void; guard?: boolean}) {
  return (
    <Dialog title="New agent" onClose={onClose} guard={guard}>
      <form><input name="id" defaultValue=""/><button type="button" onClick={onClose}>Cancel</button></form>
    </Dialog>
  )
}

describe('Dialog', () => {
  it('closes at once on Esc, a click outside or × while nothing was edited', () => {
    const onClose = vi.fn()
    const {container} = render(<Form onClose={onClose}/>)
    fireEvent.keyDown(window, {key: 'Escape'})
    fireEvent.mouseDown(container.querySelector('.overlay')!)
    fireEvent.click(screen.getByRole('button', {name: 'Close'}))
    expect(onClose).toHaveBeenCalledTimes(3)
  })

  it('asks before throwing an edit away on Esc, a click outside or ×; Keep editing (or Esc) keeps it', () => {
    const onClose = vi.fn()
    const {container} = render(<Form onClose={onClose}/>)
    const id = container.querySelector<HTMLInputElement>('[name="id"]')!
    fireEvent.input(id, {target: {value: 'build'}})
    for (const close of [
      () => fireEvent.keyDown(window, {key: 'Escape'}),
      () => fireEvent.mouseDown(container.querySelector('.overlay')!),
      () => fireEvent.click(screen.getByRole('button', {name: 'Close'})),
    ]) {
      close()
      expect(onClose).not.toHaveBeenCalled()
      const ask = screen.getByRole('alertdialog', {name: 'Discard your changes?'})
      expect(ask).toContainElement(document.activeElement as HTMLElement) // Keep editing has the focus
      fireEvent.keyDown(window, {key: 'Escape'})
      expect(screen.queryByRole('alertdialog')).toBeNull()
    }
    expect(id.value).toBe('build')
    fireEvent.mouseDown(container.querySelector('.overlay')!)
    fireEvent.click(screen.getByRole('button', {name: 'Keep editing'}))
    expect(onClose).not.toHaveBeenCalled()
    fireEvent.keyDown(window, {key: 'Escape'})
    fireEvent.click(screen.getByRole('button', {name: 'Discard'}))
    expect(onClose).toHaveBeenCalledTimes(1)
  })

  it('lets its own Cancel close without asking, and a dialog with nothing to lose turn the question off', () => {
    const onClose = vi.fn()
    const {container, unmount} = render(<Form onClose={onClose}/>)
    fireEvent.input(container.querySelector('[name="id"]')!, {target: {value: 'x'}})
    fireEvent.click(screen.getByRole('button', {name: 'Cancel'}))
    expect(onClose).toHaveBeenCalledTimes(1)
    unmount()
    const off = render(<Form onClose={onClose} guard={false}/>)
    fireEvent.input(off.container.querySelector('[name="id"]')!, {target: {value: 'x'}})
    fireEvent.keyDown(window, {key: 'Escape'})
    expect(onClose).toHaveBeenCalledTimes(2)
  })
})
