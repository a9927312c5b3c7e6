// Package lifecycle holds the agent state machine: the statuses, the exit
// reasons and the table of allowed transitions. It is pure data and logic; the
// supervisor applies transitions, this package only says which are allowed.
package lifecycle

import (
	"errors"
	"fmt"
)

// Status is the observed state of an agent.
type Status string

const (
	NotStarted  Status = "not_started"
	Queued      Status = "queued" // waits for a slot under maxRunning, or for its project's unpause
	Spawning    Status = "spawning"
	Running     Status = "running"
	TimedOut    Status = "timed_out"
	Stopping    Status = "stopping"
	Killing     Status = "killing"
	Completed   Status = "completed"
	Failed      Status = "failed"
	Stopped     Status = "stopped"
	Interrupted Status = "interrupted"
	Paused      Status = "paused"
)

// All lists every status, in the order of the lifecycle.
var All = []Status{NotStarted, Queued, Spawning, Running, TimedOut, Stopping, Killing,
	Completed, Failed, Stopped, Interrupted, Paused}

// ExitReason says why an agent's run ended.
type ExitReason string

const (
	ReasonNone                 ExitReason = ""
	ReasonCompleted            ExitReason = "completed"
	ReasonStoppedByUser        ExitReason = "stopped_by_user"
	ReasonFailed               ExitReason = "failed"
	ReasonTimedOut             ExitReason = "timed_out"
	ReasonCrashed              ExitReason = "crashed"
	ReasonExitedWhileAppClosed ExitReason = "exited_while_app_closed"
	ReasonPIDReused            ExitReason = "pid_reused"
	ReasonOrphaned             ExitReason = "orphaned"
	ReasonStale                ExitReason = "stale"
	ReasonResumeLimit          ExitReason = "resume_limit"
	ReasonPaused               ExitReason = "paused"
	ReasonExpired              ExitReason = "expired"
	ReasonUnknown              ExitReason = "unknown"
)

// Reasons lists every exit reason (the empty one included: no reason yet).
var Reasons = []ExitReason{ReasonNone, ReasonCompleted, ReasonStoppedByUser, ReasonFailed, ReasonTimedOut,
	ReasonCrashed, ReasonExitedWhileAppClosed, ReasonPIDReused, ReasonOrphaned, ReasonStale,
	ReasonResumeLimit, ReasonPaused, ReasonExpired, ReasonUnknown}

// ValidReason reports whether r is a known exit reason.
func ValidReason(r ExitReason) bool {
	for _, v := range Reasons {
		if v == r {
			return true
		}
	}
	return false
}

// Desired is what the user wants an agent to be doing.
type Desired string

const (
	DesiredRunning Desired = "running"
	DesiredStopped Desired = "stopped"
)

// transitions is the whole table of SPEC "States". A move not listed here is
// refused; that refusal is also how two monitoring layers that notice the same
// exit are kept from handling it twice.
var transitions = map[Status][]Status{
	NotStarted:  {Spawning, Queued},
	Completed:   {Spawning, Queued},
	Failed:      {Spawning, Queued, Stopped}, // stopped: a stop during keep-alive backoff
	Stopped:     {Spawning, Queued},
	Interrupted: {Spawning, Queued, Completed, Failed, Stopped},
	Paused:      {Spawning, Queued, Failed, Stopped}, // stopped: the user answered a budget pause with stop
	// A queued start is cancelled back to the status it came from (see
	// CheckRevert), or paused.
	Queued: {Spawning, Paused},
	// A failed spawn goes back to the status it came from: see CheckRevert.
	Spawning: {Running},
	Running:  {Completed, Failed, Stopping, TimedOut, Interrupted},
	TimedOut: {Stopping},
	Stopping: {Killing, Stopped, Paused},
	Killing:  {Stopped, Paused},
}

// ErrRefused is wrapped by every refused transition.
var ErrRefused = errors.New("transition refused")

// Allowed reports whether from → to is in the table.
func Allowed(from, to Status) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Check returns nil for an allowed move and a descriptive error otherwise.
func Check(from, to Status) error {
	if !Valid(from) {
		return fmt.Errorf("%w: unknown status %q", ErrRefused, from)
	}
	if !Valid(to) {
		return fmt.Errorf("%w: unknown status %q", ErrRefused, to)
	}
	if !Allowed(from, to) {
		return fmt.Errorf("%w: %s → %s is not an allowed transition", ErrRefused, from, to)
	}
	return nil
}

// CheckRevert allows a move back from a passing status to the one the agent
// had before it: a spawn that failed, or a queued start the user cancelled,
// returns to the status it started from (SPEC "spawning → previous status",
// "queued → previous status"), and to nothing else.
func CheckRevert(from, back Status) error {
	if !Valid(back) {
		return fmt.Errorf("%w: unknown status %q", ErrRefused, back)
	}
	if from != Spawning && from != Queued || back == Queued || !Allowed(back, from) {
		return fmt.Errorf("%w: %s → %s is not a way back (only a failed spawn or a cancelled queued start returns to the status it came from)", ErrRefused, from, back)
	}
	return nil
}

// Valid reports whether s is a known status.
func Valid(s Status) bool {
	for _, v := range All {
		if v == s {
			return true
		}
	}
	return false
}

// Live reports whether an agent in status s has (or is about to have) a
// process: it may not be started again and may be stopped.
func (s Status) Live() bool {
	switch s {
	case Spawning, Running, TimedOut, Stopping, Killing:
		return true
	}
	return false
}

// Terminal reports whether s is an end state (seed 003's "terminal").
func (s Status) Terminal() bool {
	switch s {
	case Completed, Failed, Stopped, Interrupted, Paused:
		return true
	}
	return false
}

// Startable reports whether start/resume may move an agent out of s.
func (s Status) Startable() bool { return s != Queued && Allowed(s, Spawning) }
