// Package recovery decides what to do with an agent that was found dead
// without the engine seeing its exit, or found alive but silent past the
// stale threshold (SPEC "Log analysis and recovery", seed 004). It is the
// rule table only; the supervisor carries the actions out.
package recovery

import "shepherd/backend/loganalysis"

// Found says how the agent came to recovery.
type Found int

const (
	FoundDead  Found = iota // at project load or by the watchdog
	FoundStale              // alive, no log growth past the threshold
)

// Input is what the rules look at.
type Input struct {
	Found     Found
	ExitKnown bool // dead with an exit status the shim recorded
	Verdict   loganalysis.Verdict
	Resumable bool // resumeArgs and a session id
	// AutoResumeCount is the number of auto-resumes already made; Limit the
	// most allowed (the project's autoResumeLimit).
	AutoResumeCount, Limit int
	UserStopped            bool // desired=stopped: never auto-resumed
}

// Action is what to do.
type Action string

const (
	KeepExitStatus   Action = "keep"             // dead, exit known: the status already follows it
	MarkCompleted    Action = "completed"        // (stale: stop the group first)
	MarkFailed       Action = "failed"           // + notification
	Resume           Action = "resume"           // (stale: SIGKILL the group first); autoResumeCount+1
	ResumeLimit      Action = "resume_limit"     // failed/resume_limit + notification; nothing left running
	StayInterrupted  Action = "stay_interrupted" // dead, not resumable: + notification
	NotifyStaleAlive Action = "notify_stale"     // stale, not resumable: one notification, mark stale, leave running
	Restart          Action = "restart"          // stale with onStale=restart: kill it, start it again with its args
)

// Decide applies the rules.
func Decide(in Input) Action {
	resume := func() Action {
		if in.UserStopped {
			if in.Found == FoundStale {
				return NotifyStaleAlive
			}
			return StayInterrupted
		}
		if in.AutoResumeCount+1 > in.Limit {
			return ResumeLimit
		}
		return Resume
	}
	if in.Found == FoundDead && in.ExitKnown {
		if in.Resumable && in.Verdict == loganalysis.Interrupted {
			return resume()
		}
		return KeepExitStatus
	}
	switch in.Verdict {
	case loganalysis.Completed:
		return MarkCompleted
	case loganalysis.Error:
		return MarkFailed
	}
	if !in.Resumable {
		if in.Found == FoundStale {
			return NotifyStaleAlive
		}
		return StayInterrupted
	}
	return resume()
}
