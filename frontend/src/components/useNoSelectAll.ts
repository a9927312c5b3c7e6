import {useEffect} from 'react'

const editable = (t: EventTarget | null) =>
  !!(t as HTMLElement | null)?.closest?.('input, textarea, [contenteditable="true"]')

/**
 * Ctrl+A (⌘A) outside a text field selects nothing: selecting the whole
 * window's text (buttons, headings, every row) is never what was meant.
 */
export function useNoSelectAll() {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 'a' && !editable(e.target)) e.preventDefault()
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [])
}
