package cli

import (
	"math"
	"strings"
	"testing"
)

// A run that reaches its budget, as a user sees and answers it.
func TestBudgetCLI(t *testing.T) {
	p := isolate(t)
	serve(t, p)
	ok(t, "add-project", t.TempDir(), "--name", "b")
	// A Claude Code stand-in whose run ends on the CLI's own budget result.
	script := `echo '{"type":"system","subtype":"init","session_id":"s1"}'; ` +
		`echo '{"type":"result","subtype":"error_max_budget_usd","is_error":true,"num_turns":2,"total_cost_usd":1.5,"session_id":"s1"}'; exit 1`
	for _, id := range []string{"x", "y"} {
		ok(t, "create", "b", id, "--profile", "claude-stream-json", "--max-budget-usd", "1", "--max-turns", "30",
			"--grace", "1", "--", "/bin/sh", "-c", script)
		ok(t, "start", "b", id)
		waitStatus(t, "b", id, "paused")
	}
	if out := ok(t, "ls", "b"); strings.Count(out, "paused · budget reached") != 2 {
		t.Fatalf("ls:\n%s", out)
	}
	out := ok(t, "budget", "b", "x")
	for _, want := range []string{"$1.00 and 30 turns per run", "last run 2 turns, $1.50",
		"Paused: budget: $1.00 per run reached ($1.50)", "shepherd budget b x raise N|remove|once|stop"} {
		if !strings.Contains(out, want) {
			t.Fatalf("budget lacks %q:\n%s", want, out)
		}
	}
	if out := ok(t, "get", "b", "x"); !strings.Contains(out, "$1.00 and 30 turns per run") ||
		!strings.Contains(out, "--max-budget-usd 1 --max-turns 30") {
		t.Fatalf("get lacks the budget:\n%s", out)
	}
	fails(t, 1, "is not above the limit reached ($1.50)", "budget", "b", "x", "raise", "0.5")
	fails(t, 1, "is not above the limit reached ($1.50)", "budget", "b", "x", "raise", "1.5")
	fails(t, 2, "answer remove", "budget", "b", "x", "raise", "0")
	fails(t, 2, "answer raise N, remove, once or stop", "budget", "b", "x", "later")
	fails(t, 2, "budget remove takes no value", "budget", "b", "x", "remove", "3")
	fails(t, 2, "budget raise: give the new limit", "budget", "b", "x", "raise")
	if out := ok(t, "budget", "b", "y", "stop"); !strings.Contains(out, "Stopped y (stopped)") {
		t.Fatalf("stop: %q", out)
	}
	fails(t, 1, "not paused by a budget", "budget", "b", "y", "once")
	if out := ok(t, "budget", "b", "y", "--usd", "$2.50", "--turns", "0"); !strings.Contains(out, "$2.50 per run") {
		t.Fatalf("set: %q", out)
	}
	if r := record(t, "b", "y"); r.MaxBudgetUsd != 2.5 || r.MaxTurns != 0 {
		t.Fatalf("y after set: %v %d", r.MaxBudgetUsd, r.MaxTurns)
	}
	if out := ok(t, "budget", "b", "x", "raise", "2"); !strings.Contains(out, "Raised; x is") {
		t.Fatalf("raise: %q", out)
	}
	if r := record(t, "b", "x"); r.MaxBudgetUsd != 2 {
		t.Fatalf("x after raise: %v", r.MaxBudgetUsd)
	}
	// x's next run reaches its budget again ($1.50 of $2? the stand-in says
	// it reached it): removing the limit is its own answer.
	waitStatus(t, "b", "x", "paused")
	if out := ok(t, "budget", "b", "x", "remove"); !strings.Contains(out, "Limit removed; x is") {
		t.Fatalf("remove: %q", out)
	}
	if r := record(t, "b", "x"); r.MaxBudgetUsd != 0 || r.MaxTurns != 30 {
		t.Fatalf("x after remove: %v %d", r.MaxBudgetUsd, r.MaxTurns)
	}
	if out := ok(t, "settings", "b", "--dailyBudgetUsd", "20"); !strings.Contains(strings.Join(strings.Fields(out), " "), "dailyBudgetUsd 20") {
		t.Fatalf("settings:\n%s", out)
	}
	fails(t, 1, "dailyBudgetUsd must be 0 (none)", "settings", "b", "--dailyBudgetUsd", "2000000")
	for _, l := range strings.Split(ok(t, "help", "budget"), "\n") {
		mine := strings.Contains(l, "budget") || strings.Contains(l, "--usd") || strings.Contains(l, "--turns")
		if mine && len(l) > 80 {
			t.Fatalf("help line over 80 columns: %q", l)
		}
	}
}

// parseUsd reads what a user types as dollars: never a negative, NaN or
// infinite amount without an error.
func FuzzParseUsd(f *testing.F) {
	for _, s := range []string{"5", "$2.50", "0", "-1", "NaN", "Inf", "1e400", "$", "", "0x10", "1_000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseUsd(s)
		if err != nil {
			return
		}
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("parseUsd(%q) = %v without an error", s, v)
		}
	})
}
