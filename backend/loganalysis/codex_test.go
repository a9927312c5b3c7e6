package loganalysis

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var codexProfile = Profile{Name: ProfileCodex}

func TestCodexAnalyze(t *testing.T) {
	for _, tc := range []struct {
		file      string
		verdict   Verdict
		session   string
		turns     int
		malformed int
		text      string
	}{
		{"codex_success.jsonl", Completed, "0199a213-81c0-7800-8aa1-bbab2a035a53", 1, 0, ""},
		{"codex_turn_failed.jsonl", Error, "0199a213-81c0-7800-8aa1-bbab2a035a53", 1, 0, "401 Unauthorized"},
		// An error ITEM is a warning, not a failure.
		{"codex_warning_only.jsonl", Completed, "t-warn", 1, 0, ""},
		{"codex_silent.jsonl", Interrupted, "t-silent", 0, 0, ""},
		{"codex_long_command.jsonl", Interrupted, "t-long", 0, 0, ""},
		// A resumed run (same thread id) that has not finished: the latest run decides.
		{"codex_resumed.jsonl", Interrupted, "t-1", 0, 0, ""},
		// Malformed and truncated lines are skipped and counted.
		{"codex_malformed.jsonl", Completed, "t-bad", 1, 3, ""},
		{"empty.log", Interrupted, "", 0, 0, ""},
	} {
		got, err := Analyze(filepath.Join("testdata", tc.file), codexProfile)
		if err != nil {
			t.Fatal(err)
		}
		if got.Verdict != tc.verdict || got.SessionID != tc.session || got.Malformed != tc.malformed {
			t.Errorf("%s: %s %q malformed %d; want %s %q %d", tc.file, got.Verdict, got.SessionID, got.Malformed, tc.verdict, tc.session, tc.malformed)
		}
		if tc.turns > 0 && (got.Claude == nil || got.Claude.NumTurns != tc.turns || !strings.Contains(got.Claude.Result, tc.text)) {
			t.Errorf("%s: outcome %+v", tc.file, got.Claude)
		}
	}
	got, _ := Analyze(filepath.Join("testdata", "codex_success.jsonl"), codexProfile)
	if c := got.Claude; c.InputTokens != 24763 || c.CachedTokens != 24448 || c.OutputTokens != 122 || c.ReasoningTokens != 64 {
		t.Fatalf("tokens %+v", c)
	}
	// Never a substring match: the agent's message says "error".
	if got.Verdict != Completed {
		t.Fatal("an agent message mentioning an error failed the run")
	}
}

// The scanner follows a Codex run: the thread id, a command in flight until
// its item.completed, the turn's end with its figures.
func TestCodexScanner(t *testing.T) {
	s := NewScanner(codexProfile)
	b, _ := os.ReadFile(filepath.Join("testdata", "codex_success.jsonl"))
	lines := strings.SplitAfter(string(b), "\n")
	var res *Claude
	for i, l := range lines {
		sid, r := s.Feed([]byte(l))
		if r != nil {
			res = r
		}
		if strings.Contains(l, `"item.started"`) {
			if tl, ok := s.InFlight(); !ok || tl.ID != "item_1" || tl.Name != "go" {
				t.Fatalf("line %d: in flight %+v %v", i, tl, ok)
			}
		}
		if strings.Contains(l, `"item.completed","item":{"id":"item_1"`) {
			if _, ok := s.InFlight(); ok {
				t.Fatal("command still in flight after its item.completed")
			}
		}
		if i >= 2 && sid != "0199a213-81c0-7800-8aa1-bbab2a035a53" {
			t.Fatalf("line %d: session %q", i, sid)
		}
	}
	if res == nil || res.Failed() || res.NumTurns != 1 || res.OutputTokens != 122 {
		t.Fatalf("result %+v", res)
	}
	// A new run (resume) clears the outcome until its own turn ends.
	if _, r := s.Feed([]byte(`{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}` + "\n")); r != nil || s.Result() != nil {
		t.Fatal("a resumed run kept the earlier outcome")
	}
	s.Feed([]byte("{\"type\":\"item.started\",\"item\":{\"id\":\"x\",\"type\":\"command_execution\",\"command\":\"make\"}}\n{broken\n"))
	if tl, ok := s.InFlight(); !ok || tl.Name != "make" || s.Malformed() != 1 {
		t.Fatalf("in flight %+v %v, malformed %d", tl, ok, s.Malformed())
	}
}
