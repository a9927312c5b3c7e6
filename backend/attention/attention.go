// Package attention decides what needs the user (SPEC "Attention"): which
// agents belong in Needs you and why, in words. The engine puts the reason on
// every record it hands out (Record.Attention), so the window's list, the
// project's count, the CLI and `shepherd ack` use the same rule.
package attention

import (
	"fmt"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
)

// CrashLoop is the number of keep-alive restart failures in a row from which
// an agent is in a crash loop. With the backoff (2 s, doubling), five crashes
// in a row fall within about five minutes unless the runs themselves last.
const CrashLoop = 5

// Reason is why r needs the user, in a few words; "" when it does not —
// including when the user acknowledged it (until it needs them again). now
// is for the crash loop's next restart.
func Reason(r *store.Record, now time.Time) string {
	if r.AcknowledgedAt != nil {
		return ""
	}
	return reason(r, now)
}

// Acknowledgeable reports whether there is something to acknowledge.
func Acknowledgeable(r *store.Record, now time.Time) bool { return reason(r, now) != "" }

// InCrashLoop: a keep-alive agent the user wants running that has crashed
// CrashLoop times in a row or more.
func InCrashLoop(r *store.Record) bool {
	return r.RestartFailureCount >= CrashLoop && r.Desired == lifecycle.DesiredRunning && r.KeepAlive
}

func reason(r *store.Record, now time.Time) string {
	live := r.Status.Live()
	if act := r.Activity; act != nil && act.State == store.ActivityWaiting && act.NeedsYou && r.Status == lifecycle.Running {
		return "waiting: " + act.Waiting
	}
	if r.BudgetPause != "" && r.Status == lifecycle.Paused {
		// A budget asks: raise it, resume once, or stop.
		if r.PauseNote != "" {
			return r.PauseNote
		}
		return "budget reached"
	}
	if r.Stale && r.Status == lifecycle.Running {
		return "silent, left running"
	}
	if InCrashLoop(r) {
		s := fmt.Sprintf("crash loop: %d crashes in a row", r.RestartFailureCount)
		if r.NextRestartAt != nil && !live {
			if d := r.NextRestartAt.Sub(now); d > 0 {
				s += fmt.Sprintf(", next try in %s", d.Round(time.Second))
			} else {
				s += ", restarting"
			}
		}
		return s
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
		unknown := r.ExitReason == "" || r.ExitReason == lifecycle.ReasonUnknown ||
			r.ExitReason == lifecycle.ReasonExitedWhileAppClosed && r.ExitCode == nil
		if unknown {
			return "interrupted, reason unknown"
		}
		return "interrupted"
	}
	if r.Error != "" && !live && r.Status != lifecycle.Queued {
		if r.ExitReason == lifecycle.ReasonTimedOut {
			return "timed out"
		}
		return "could not start"
	}
	return ""
}
