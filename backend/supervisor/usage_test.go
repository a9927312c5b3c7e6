package supervisor

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
	"shepherd/internal/testutil"
)

// claudeLimited starts a fake Claude agent refused by its 5-hour window,
// which resets at resets (resumed runs in resumeMode).
func (h *claudeHarness) claudeLimited(id, resumeMode string, resets time.Time) {
	h.t.Helper()
	h.create(AgentSpec{ID: id, Command: fakeClaude, Cwd: h.cwd, Profile: store.ProfileClaudeJSON,
		Args:       []string{"-p", "--verbose", "--output-format", "stream-json", "fix it"},
		ResumeArgs: []string{"-p", "--verbose", "--output-format", "stream-json", "--resume", "{sessionId}", "--", "continue"},
		Env: map[string]string{"FAKE_CLAUDE_MODE": "usage-limit", "FAKE_CLAUDE_RESUME_MODE": resumeMode, "FAKE_CLAUDE_RECORD": h.record,
			"FAKE_CLAUDE_RESETS_AT": strconv.FormatInt(resets.Unix(), 10), "TZ": "UTC"},
		GraceSec: 1})
	h.start(id)
}

// A run refused by the usage limit is paused, calm (not failed, not Needs
// you), `usage limit until …`, and resumed in its session after the reset
// on the engine's clock; agents of one account go two at a time, the next
// ones a stagger later.
func TestUsageLimitWaitsAndResumes(t *testing.T) {
	h := newClaudeHarness(t)
	resets := h.clk.Now().Add(time.Hour).Truncate(time.Second)
	for _, id := range []string{"a", "b", "c"} {
		h.claudeLimited(id, "success", resets)
		r := h.waitStatus(id, lifecycle.Paused)
		if r.UsageLimitUntil == nil || !r.UsageLimitUntil.Equal(resets.Add(30*time.Second)) || r.Attention != "" ||
			!strings.HasPrefix(r.PauseNote, "usage limit until ") || !strings.HasSuffix(r.PauseNote, "(5-hour)") {
			t.Fatalf("%s: until %v attention %q note %q", id, r.UsageLimitUntil, r.Attention, r.PauseNote)
		}
	}
	if ev := h.events(); !strings.Contains(ev, `"reason":"usage limit"`) {
		t.Fatalf("events:\n%s", ev)
	}
	h.clk.Advance(time.Hour + 29*time.Second)
	if r := h.get("a"); r.Status != lifecycle.Paused {
		t.Fatalf("resumed before the reset: %s", r.Status)
	}
	h.clk.Advance(time.Second)
	h.waitStatus("a", lifecycle.Completed)
	h.waitStatus("b", lifecycle.Completed)
	if r := h.get("c"); r.Status != lifecycle.Paused {
		t.Fatalf("c went with the first two: %s", r.Status)
	}
	h.clk.Advance(2 * time.Minute)
	r := h.waitStatus("c", lifecycle.Completed)
	if r.UsageLimitUntil != nil || r.PauseNote != "" || r.ResumeCount != 1 {
		t.Fatalf("after the resume: %+v", r)
	}
	for _, inv := range h.invocations()[3:] {
		if inv.Resume == "" {
			t.Fatalf("not resumed in its session: %+v", inv)
		}
	}
}

// A second refusal right after the resume is not a loop: the agent waits
// for the next reset.
func TestUsageLimitNoLoop(t *testing.T) {
	h := newClaudeHarness(t)
	resets := h.clk.Now().Add(time.Hour).Truncate(time.Second)
	h.claudeLimited("a", "usage-limit", resets)
	first := h.waitStatus("a", lifecycle.Paused)
	h.clk.Advance(time.Hour + 30*time.Second)
	testutil.Eventually(t, "the resume", func() bool { return len(h.invocations()) == 2 })
	var r *store.Record
	testutil.Eventually(t, "the second refusal", func() bool {
		r = h.get("a")
		return r.Status == lifecycle.Paused && r.UsageLimitUntil != nil && r.UsageLimitUntil.After(*first.UsageLimitUntil)
	})
	// The refusal named the reset that passed: it waits one window (5 h) on.
	if want := first.UsageLimitUntil.Add(5 * time.Hour); r.UsageLimitUntil.Before(want.Add(-time.Minute)) {
		t.Fatalf("waits until %v, want about %v", r.UsageLimitUntil, want)
	}
	if n := len(h.invocations()); n != 2 {
		t.Fatalf("%d runs, want 2", n)
	}
}

// What a run says of its account's windows is kept for the header; a
// window whose reset has passed reads fresh.
func TestUsageWindowsKept(t *testing.T) {
	h := newClaudeHarness(t)
	if len(h.e.Usage()) != 0 {
		t.Fatal("windows known before any run")
	}
	h.claude("w", "usage-warning", "")
	h.waitStatus("w", lifecycle.Completed)
	u := h.e.Usage()
	if len(u) != 1 || u[0].Account != "claude:" || len(u[0].Windows) == 0 {
		t.Fatalf("usage %+v", u)
	}
	w := u[0].Windows[0]
	if w.Name != "five_hour" || w.Utilization != 0.91 || w.Status != "allowed_warning" || w.ResetsAt.IsZero() {
		t.Fatalf("window %+v", w)
	}
	h.clk.Advance(w.ResetsAt.Sub(h.clk.Now()) + time.Second)
	if w := h.e.Usage()[0].Windows[0]; w.Utilization != 0 || w.Status != "allowed" {
		t.Fatalf("after its reset: %+v", w)
	}
}

// With the setting off, a refused run fails as it did.
func TestUsageLimitWaitOff(t *testing.T) {
	h := newClaudeHarness(t)
	s, _ := h.e.GetSettings(h.project.ID)
	s.UsageLimitWait = false
	if _, err := h.e.PutSettings(h.project.ID, s); err != nil {
		t.Fatal(err)
	}
	h.claudeLimited("a", "success", h.clk.Now().Add(time.Hour))
	if r := h.waitStatus("a", lifecycle.Failed); r.UsageLimitUntil != nil {
		t.Fatalf("waits with the setting off: %+v", r)
	}
}
