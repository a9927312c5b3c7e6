package attention

import (
	"testing"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
)

func TestBudgetPauseNeedsYou(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  store.Record
		want string
	}{
		{"paused by a budget", store.Record{Status: lifecycle.Paused, BudgetPause: "run"}, "budget reached"},
		{"paused by the daily budget", store.Record{Status: lifecycle.Paused, BudgetPause: "daily"}, "budget reached"},
		{"paused by the user", store.Record{Status: lifecycle.Paused, PauseNote: "lunch"}, ""},
		{"acknowledged", store.Record{Status: lifecycle.Paused, BudgetPause: "run", AcknowledgedAt: store.Ptr(time.Now())}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Reason(&tc.rec); got != tc.want {
				t.Fatalf("Reason = %q, want %q", got, tc.want)
			}
		})
	}
}
