// Small inline icons: the desktop's fonts may have no emoji.

export function BellIcon() {
  return (
    <svg width="16" height="16" viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" strokeWidth="2"
      strokeLinecap="round" strokeLinejoin="round">
      <path d="M6 8a6 6 0 0 1 12 0c0 7 3 9 3 9H3s3-2 3-9"/>
      <path d="M10.3 21a1.94 1.94 0 0 0 3.4 0"/>
    </svg>
  )
}

export function LockIcon() {
  return (
    <svg width="11" height="11" viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" strokeWidth="2.5"
      strokeLinecap="round" strokeLinejoin="round">
      <rect x="4" y="11" width="16" height="10" rx="2"/>
      <path d="M8 11V7a4 4 0 0 1 8 0v4"/>
    </svg>
  )
}

/** Paused: two bars (U+23F8 is missing from many desktop fonts). */
export function PauseIcon({size = 11}: {size?: number}) {
  return (
    <svg width={size} height={size} viewBox="0 0 24 24" aria-hidden="true" fill="currentColor" className="icon-svg">
      <rect x="5" y="4" width="5" height="16" rx="1"/>
      <rect x="14" y="4" width="5" height="16" rx="1"/>
    </svg>
  )
}

/** Timed out: a stopwatch (U+23F1 is missing from many desktop fonts). */
export function TimerIcon({size = 11}: {size?: number}) {
  return (
    <svg width={size} height={size} viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" strokeWidth="2.5"
      strokeLinecap="round" className="icon-svg">
      <circle cx="12" cy="14" r="8"/>
      <path d="M12 14V10M9 2h6"/>
    </svg>
  )
}
