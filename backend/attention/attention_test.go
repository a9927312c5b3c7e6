package attention

import (
	"testing"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
)

func TestReason(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	next := now.Add(32 * time.Second)
	one := 1
	cases := []struct {
		name string
		r    store.Record
		want string
	}{
		{"running", store.Record{Status: lifecycle.Running}, ""},
		{"waiting for a permission", store.Record{Status: lifecycle.Running,
			Activity: &store.Activity{State: store.ActivityWaiting, Waiting: "permission for Bash", NeedsYou: true}}, "waiting: permission for Bash"},
		{"rate limit is not Needs you", store.Record{Status: lifecycle.Running,
			Activity: &store.Activity{State: store.ActivityWaiting, Waiting: "rate limit until 12:01:00"}}, ""},
		{"stale", store.Record{Status: lifecycle.Running, Stale: true}, "silent, left running"},
		{"failed", store.Record{Status: lifecycle.Failed, ExitCode: &one}, "failed"},
		{"acknowledged failure", store.Record{Status: lifecycle.Failed, AcknowledgedAt: &now}, ""},
		{"crash loop", store.Record{Status: lifecycle.Failed, KeepAlive: true, Desired: lifecycle.DesiredRunning,
			RestartFailureCount: 5, NextRestartAt: &next}, "crash loop: 5 crashes in a row, next try in 32s"},
		{"backoff before the loop", store.Record{Status: lifecycle.Failed, KeepAlive: true, Desired: lifecycle.DesiredRunning,
			RestartFailureCount: 2, NextRestartAt: &next}, ""},
		{"stopped during backoff", store.Record{Status: lifecycle.Stopped, KeepAlive: true, Desired: lifecycle.DesiredStopped,
			RestartFailureCount: 6}, ""},
		{"budget", store.Record{Status: lifecycle.Paused, BudgetPause: "run", PauseNote: "budget: $5.00 per run reached ($5.12)"},
			"budget: $5.00 per run reached ($5.12)"},
		{"paused by the user", store.Record{Status: lifecycle.Paused}, ""},
		{"interrupted while closed, code unknown", store.Record{Status: lifecycle.Interrupted,
			ExitReason: lifecycle.ReasonExitedWhileAppClosed}, "interrupted, reason unknown"},
		{"could not start", store.Record{Status: lifecycle.NotStarted, Error: "no such file"}, "could not start"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Reason(&tc.r, now); got != tc.want {
				t.Fatalf("Reason = %q, want %q", got, tc.want)
			}
		})
	}
}
