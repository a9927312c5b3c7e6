package recovery

import (
	"testing"

	"shepherd/backend/loganalysis"
)

// One row per rule of SPEC "Log analysis and recovery".
func TestDecide(t *testing.T) {
	const (
		done = loganalysis.Completed
		errv = loganalysis.Error
		intr = loganalysis.Interrupted
	)
	cases := []struct {
		name string
		in   Input
		want Action
	}{
		{"dead, exit known, result line: status follows the exit", Input{Found: FoundDead, ExitKnown: true, Verdict: done, Resumable: true, Limit: 3}, KeepExitStatus},
		{"dead, exit known, error line: status follows the exit", Input{Found: FoundDead, ExitKnown: true, Verdict: errv, Resumable: true, Limit: 3}, KeepExitStatus},
		{"dead, exit known, no result, resumable: resume", Input{Found: FoundDead, ExitKnown: true, Verdict: intr, Resumable: true, Limit: 3}, Resume},
		{"dead, exit known, no result, not resumable: keep", Input{Found: FoundDead, ExitKnown: true, Verdict: intr, Limit: 3}, KeepExitStatus},
		{"dead, unknown exit, completed", Input{Found: FoundDead, Verdict: done, Resumable: true, Limit: 3}, MarkCompleted},
		{"dead, unknown exit, error", Input{Found: FoundDead, Verdict: errv, Resumable: true, Limit: 3}, MarkFailed},
		{"dead, unknown exit, interrupted, resumable", Input{Found: FoundDead, Verdict: intr, Resumable: true, Limit: 3}, Resume},
		{"dead, unknown exit, interrupted, not resumable", Input{Found: FoundDead, Verdict: intr, Limit: 3}, StayInterrupted},
		{"stale, completed", Input{Found: FoundStale, Verdict: done, Resumable: true, Limit: 3}, MarkCompleted},
		{"stale, error", Input{Found: FoundStale, Verdict: errv, Limit: 3}, MarkFailed},
		{"stale, interrupted, resumable", Input{Found: FoundStale, Verdict: intr, Resumable: true, AutoResumeCount: 2, Limit: 3}, Resume},
		{"stale, interrupted, not resumable", Input{Found: FoundStale, Verdict: intr, Limit: 3}, NotifyStaleAlive},
		{"resume past the limit", Input{Found: FoundStale, Verdict: intr, Resumable: true, AutoResumeCount: 3, Limit: 3}, ResumeLimit},
		{"dead past the limit", Input{Found: FoundDead, Verdict: intr, Resumable: true, AutoResumeCount: 3, Limit: 3}, ResumeLimit},
		{"limit 0 never resumes", Input{Found: FoundDead, Verdict: intr, Resumable: true, Limit: 0}, ResumeLimit},
		{"user stopped: never auto-resumed", Input{Found: FoundDead, Verdict: intr, Resumable: true, Limit: 3, UserStopped: true}, StayInterrupted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.in); got != tc.want {
				t.Fatalf("Decide(%+v) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}
