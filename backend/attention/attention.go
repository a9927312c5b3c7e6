// Package attention decides what needs the user (SPEC "Attention"): which
// agents belong in Needs you and why, in words. The window's list, the
// project's count and `shepherd ack` use the same rule.
package attention

import (
	"fmt"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
)

// Looping is the number of keep-alive restart failures in a row from which
// an agent counts as in a restart loop.
const Looping = 3

// Reason is why r needs the user, in a few words; "" when it does not —
// including when the user acknowledged it (until it needs them again).
func Reason(r *store.Record) string {
	if r.AcknowledgedAt != nil {
		return ""
	}
	return reason(r)
}

// Acknowledgeable reports whether there is something to acknowledge.
func Acknowledgeable(r *store.Record) bool { return reason(r) != "" }

func reason(r *store.Record) string {
	live := r.Status.Live()
	if r.Stale && r.Status == lifecycle.Running {
		return "silent, left running"
	}
	if r.RestartFailureCount >= Looping && r.Desired == lifecycle.DesiredRunning {
		return fmt.Sprintf("restart loop (%d failures in a row)", r.RestartFailureCount)
	}
	if r.NextRestartAt != nil && !live {
		return ""
	}
	switch r.Status {
	case lifecycle.Failed:
		if r.ExitReason == lifecycle.ReasonResumeLimit {
			return "auto-resume limit reached"
		}
		return "failed"
	case lifecycle.Interrupted:
		return "interrupted"
	case lifecycle.Paused:
		if r.BudgetPause != "" {
			return "budget reached" // it asks: raise, resume once, or stop
		}
	}
	if r.Error != "" && !live && r.Status != lifecycle.Queued {
		if r.ExitReason == lifecycle.ReasonTimedOut {
			return "timed out"
		}
		return "could not start"
	}
	return ""
}
