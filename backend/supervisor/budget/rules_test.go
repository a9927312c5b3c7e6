package budget

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"shepherd/backend/lifecycle"
	"shepherd/backend/loganalysis"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/errs"
)

// Claude Code's own limits go before a "--" that ends the options; a flag
// the user gave is theirs; a run let past its limits gets none.
func TestArgs(t *testing.T) {
	r := &store.Record{Profile: store.ProfileClaudeJSON, MaxBudgetUsd: 2.5, MaxTurns: 40}
	for _, tc := range []struct {
		name string
		rec  store.Record
		args []string
		want []string
	}{
		{"appended", *r, []string{"-p", "x"}, []string{"-p", "x", "--max-budget-usd", "2.5", "--max-turns", "40"}},
		{"before --", *r, []string{"--resume", "s", "--", "continue"}, []string{"--resume", "s", "--max-budget-usd", "2.5", "--max-turns", "40", "--", "continue"}},
		{"user's own flag kept", *r, []string{"--max-turns", "9"}, []string{"--max-turns", "9", "--max-budget-usd", "2.5"}},
		{"not claude", store.Record{Profile: store.ProfileGeneric, MaxBudgetUsd: 1}, []string{"a"}, []string{"a"}},
		{"once", store.Record{Profile: store.ProfileClaudeJSON, MaxBudgetUsd: 1, BudgetOnce: true}, []string{"a"}, []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Args(&tc.rec, tc.args); !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// A failed result that reached a limit is a budget's; a success, or a run
// let past its limits once, is not.
func TestReached(t *testing.T) {
	r := &store.Record{ID: "a", Profile: store.ProfileClaudeJSON, MaxBudgetUsd: 0.5, MaxTurns: 10}
	for _, tc := range []struct {
		name string
		c    loganalysis.Claude
		once bool
		want string
	}{
		{"budget by subtype", loganalysis.Claude{Subtype: "error_max_budget_usd", TotalCostUSD: 0.4}, false, Run},
		{"budget by cost", loganalysis.Claude{Subtype: "error_during_execution", TotalCostUSD: 0.5}, false, Run},
		{"turns", loganalysis.Claude{Subtype: "error_max_turns", NumTurns: 10}, false, Turns},
		{"success costs what it costs", loganalysis.Claude{Subtype: "success", TotalCostUSD: 9}, false, ""},
		{"once", loganalysis.Claude{Subtype: "error_max_turns", NumTurns: 10}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := *r
			rec.BudgetOnce = tc.once
			h := Reached(&rec, &tc.c)
			if got := ""; h != nil {
				got = h.Kind
				if got != tc.want {
					t.Fatalf("reached %q (%s), want %q", got, h.Note, tc.want)
				}
			} else if tc.want != "" {
				t.Fatalf("nothing reached, want %q", tc.want)
			}
		})
	}
}

// Only the user answers a budget pause: an agent's start of an agent a
// budget paused is refused, naming both.
func TestRefuse(t *testing.T) {
	r := &store.Record{ID: "kid", Status: lifecycle.Paused, BudgetPause: Run, PauseNote: "budget: $1 per run reached ($1.20)"}
	if err := Refuse("", r, "start"); err != nil {
		t.Fatalf("the user: %v", err)
	}
	err := Refuse("boss", r, "resume")
	if !errors.Is(err, errs.PermissionDenied) || !strings.Contains(err.Error(), "agent 'boss' cannot resume 'kid'") {
		t.Fatalf("an agent answered a budget pause: %v", err)
	}
	other := *r
	other.BudgetPause = ""
	if err := Refuse("boss", &other, "resume"); err != nil {
		t.Fatalf("a pause that is not a budget's: %v", err)
	}
}
