import {act, cleanup, fireEvent, render, screen, within} from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import {useState} from 'react'
import {describe, expect, it, vi} from 'vitest'
import {Confirm, Dialog} from './Dialog'

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

function Opener({loading = false, confirm}: {loading?: boolean; confirm?: 'danger' | 'plain'}) {
  const [open, setOpen] = useState(false)
  const [gone, setGone] = useState(false)
  const close = () => setOpen(false)
  return (
    <>
      {!gone && <button type="button" onClick={() => setOpen(true)}>Open</button>}
      <button type="button" onClick={() => setGone(true)}>Drop the opener</button>
      <div tabIndex={-1} data-focus-home>the list's row</div>
      {open && !confirm && (
        <Dialog title="New agent" onClose={close}>
          {loading
            ? <p className="dialog-body">Loading…</p>
            : (
              <form className="dialog-body">
                <div className="presets"><button type="button">Claude</button></div>
                <input name="id" aria-label="Id"/>
                <select name="profile" aria-label="Profile"><option>generic</option></select>
                <footer className="dialog-foot">
                  <button type="button" onClick={close}>Cancel</button>
                  <button type="submit" className="primary">Create</button>
                </footer>
              </form>
            )}
        </Dialog>
      )}
      {open && confirm && (
        <Confirm title="Remove build" message={<p>Shepherd forgets build.</p>} confirmLabel="Remove" danger={confirm === 'danger'}
          onConfirm={close} onClose={close}>
          <label><input type="checkbox"/> Also delete its log</label>
        </Confirm>
      )}
    </>
  )
}

describe('Dialog focus', () => {
  const active = () => document.activeElement

  it('starts on the first field, Tab and Shift+Tab go round inside it, Esc gives the focus back to what opened it', async () => {
    const user = userEvent.setup()
    render(<Opener/>)
    await user.click(screen.getByRole('button', {name: 'Open'}))
    const dialog = screen.getByRole('dialog', {name: 'New agent'})
    expect(active()).toBe(screen.getByRole('textbox', {name: 'Id'}))
    const order = ['Profile', 'Cancel', 'Create', 'Close', 'Claude', 'Id']
    for (const name of order) {
      await user.tab()
      expect(active()).toBe(within(dialog).getByRole(name === 'Id' ? 'textbox' : name === 'Profile' ? 'combobox' : 'button', {name}))
    }
    for (const name of ['Claude', 'Close', 'Create']) {
      await user.tab({shift: true})
      expect(active()).toHaveAccessibleName(name)
    }
    expect(dialog).toContainElement(active() as HTMLElement)
    await user.keyboard('{Escape}')
    expect(screen.queryByRole('dialog')).toBeNull()
    expect(active()).toBe(screen.getByRole('button', {name: 'Open'}))
  })

  it('the focus that lands outside comes back in', async () => {
    const user = userEvent.setup()
    render(<Opener/>)
    await user.click(screen.getByRole('button', {name: 'Open'}))
    act(() => screen.getByRole('button', {name: 'Drop the opener'}).focus())
    expect(screen.getByRole('dialog')).toContainElement(active() as HTMLElement)
  })

  it('while its form loads, the dialog itself has the focus; then the form’s first field', async () => {
    const user = userEvent.setup()
    const {rerender} = render(<Opener loading/>)
    await user.click(screen.getByRole('button', {name: 'Open'}))
    expect(active()).toBe(screen.getByRole('dialog'))
    await user.tab() // Tab from the dialog itself: its first control
    expect(active()).toHaveAccessibleName('Close')
    await user.tab({shift: true})
    expect(active()).toHaveAccessibleName('Close') // the only one: it stays inside
    act(() => screen.getByRole('dialog').focus())
    rerender(<Opener/>)
    await vi.waitFor(() => expect(active()).toBe(screen.getByRole('textbox', {name: 'Id'})))
  })

  it('a question starts on its answer; on Cancel when the answer destroys; it is described by what it asks', async () => {
    const user = userEvent.setup()
    render(<Opener confirm="danger"/>)
    await user.click(screen.getByRole('button', {name: 'Open'}))
    expect(active()).toHaveAccessibleName('Cancel')
    expect(screen.getByRole('dialog', {name: 'Remove build'})).toHaveAccessibleDescription('Shepherd forgets build.')
    await user.keyboard('{Enter}') // Cancel
    expect(screen.queryByRole('dialog')).toBeNull()
    expect(active()).toHaveAccessibleName('Open')
    cleanup()
    render(<Opener confirm="plain"/>)
    await user.click(screen.getByRole('button', {name: 'Open'}))
    expect(active()).toHaveAccessibleName('Remove')
  })

  it('when what opened it is gone, the focus goes to the list’s current row', async () => {
    const user = userEvent.setup()
    render(<Opener confirm="danger"/>)
    await user.click(screen.getByRole('button', {name: 'Open'}))
    // The opener leaves while the dialog is open (as a removed agent's row does).
    act(() => fireEvent.click(screen.getByRole('button', {name: 'Drop the opener', hidden: true})))
    await user.click(screen.getByRole('button', {name: 'Remove'}))
    expect(screen.queryByRole('dialog')).toBeNull()
    expect(active()).toHaveAttribute('data-focus-home')
  })

  it('"Discard your changes?" keeps the focus on its two buttons; Keep editing goes back to the field, Discard to the opener', async () => {
    const user = userEvent.setup()
    render(<Opener/>)
    await user.click(screen.getByRole('button', {name: 'Open'}))
    await user.keyboard('build')
    await user.keyboard('{Escape}')
    const ask = screen.getByRole('alertdialog', {name: 'Discard your changes?'})
    expect(active()).toHaveAccessibleName('Keep editing')
    await user.tab()
    expect(active()).toHaveAccessibleName('Discard')
    await user.tab()
    expect(active()).toHaveAccessibleName('Keep editing')
    await user.tab({shift: true})
    expect(ask).toContainElement(active() as HTMLElement)
    await user.keyboard('{Escape}') // keep editing
    expect(screen.queryByRole('alertdialog')).toBeNull()
    expect(active()).toBe(screen.getByRole('textbox', {name: 'Id'}))
    expect(screen.getByRole('textbox', {name: 'Id'})).toHaveValue('build')
    await user.keyboard('{Escape}')
    await user.click(screen.getByRole('button', {name: 'Discard'}))
    expect(screen.queryByRole('dialog')).toBeNull()
    expect(active()).toHaveAccessibleName('Open')
  })
})
