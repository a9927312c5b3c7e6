package supervisor

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/notify"
	"shepherd/backend/store"
	"shepherd/internal/testutil"
)

// claudeTool starts the fake Claude in "tool" mode: a Bash tool call that
// runs a silent child for secs seconds.
func (h *claudeHarness) claudeTool(id string, secs int) {
	h.t.Helper()
	h.create(AgentSpec{ID: id, Command: fakeClaude, Cwd: h.cwd, Profile: store.ProfileClaudeJSON,
		Args:       []string{"-p", "--verbose", "--output-format", "stream-json", "run the tests"},
		ResumeArgs: []string{"-p", "--verbose", "--output-format", "stream-json", "--resume", "{sessionId}", "--", "continue"},
		Env: map[string]string{"FAKE_CLAUDE_MODE": "tool", "FAKE_CLAUDE_RESUME_MODE": "success",
			"FAKE_CLAUDE_RECORD": h.record, "FAKE_CLAUDE_TOOL_SECONDS": strconv.Itoa(secs)},
		GraceSec: 1})
	h.start(id)
	testutil.Eventually(h.t, "the tool call in flight", func() bool {
		h.e.PollLogsNow()
		_, a, _ := h.e.agent(h.project.ID, id)
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.run == nil {
			return false
		}
		b, _ := readFile(a.rec.LogPath)
		_, _, ok := a.run.inFlight()
		// Every line written so far is read: a line read only after the
		// clock moves would stamp activity then, and the agent would look
		// working.
		a.run.scanMu.Lock()
		read := a.run.logSize == int64(len(b)) && a.run.logOff == int64(len(b))
		a.run.scanMu.Unlock()
		return ok && read && strings.Contains(b, "task_started")
	})
}

func readFile(p string) (string, error) {
	b, err := os.ReadFile(p)
	return string(b), err
}

// A Claude agent running a long Bash tool prints nothing for longer than the
// stale threshold: it is busy, not stale — not killed, not resumed — and it
// completes when the tool ends.
func TestBusyToolIsNotStale(t *testing.T) {
	h := newClaudeHarness(t)
	h.claudeTool("a", 3)
	h.goStale()
	r := h.get("a")
	if r.Status != lifecycle.Running || r.Activity == nil || r.Activity.State != store.ActivityBusy || r.Activity.Tool != "Bash" {
		t.Fatalf("during the tool: %s activity %+v", r.Status, r.Activity)
	}
	if r.Activity.ToolSince == nil {
		t.Fatal("no tool start time")
	}
	r = h.waitStatus("a", lifecycle.Completed)
	if r.AutoResumeCount != 0 || len(h.invocations()) != 1 {
		t.Fatalf("a busy agent was resumed: %d resumes, %d runs", r.AutoResumeCount, len(h.invocations()))
	}
	if strings.Contains(h.events(), `"event":"recovery"`) {
		t.Fatal("recovery ran for a busy agent")
	}
}

// Busy for longer than busyThresholdSec: stale after all, killed and
// resumed.
func TestBusyPastBusyThresholdIsStale(t *testing.T) {
	h := newClaudeHarness(t)
	s, _ := h.e.GetSettings(h.project.ID)
	s.BusyThresholdSec = 20
	if _, err := h.e.PutSettings(h.project.ID, s); err != nil {
		t.Fatal(err)
	}
	h.claudeTool("a", 90)
	h.goStale() // 11 s: busy
	if r := h.get("a"); r.Activity == nil || r.Activity.State != store.ActivityBusy {
		t.Fatalf("at 11 s: %+v", r.Activity)
	}
	h.goStale() // 22 s: past the busy threshold
	r := h.waitStatus("a", lifecycle.Completed)
	if r.AutoResumeCount != 1 {
		t.Fatalf("autoResumeCount %d", r.AutoResumeCount)
	}
	if inv := h.invocations(); len(inv) != 2 || inv[1].Resume != sess(1) {
		t.Fatalf("invocations %+v", inv)
	}
}

// A silent generic agent (stale check on) whose process burns CPU is busy,
// not stale.
func TestCPUBurnerIsBusy(t *testing.T) {
	h := newClaudeHarness(t)
	h.create(AgentSpec{ID: "cpu", Command: "/bin/sh", Args: []string{"-c", "while :; do :; done"}, StaleCheck: store.Ptr(true)})
	h.start("cpu")
	h.goStale()
	testutil.Eventually(t, "busy by its CPU", func() bool {
		r := h.get("cpu")
		return r.Activity != nil && r.Activity.State == store.ActivityBusy && r.Activity.Tool == "cpu"
	})
	h.goStale()
	if r := h.get("cpu"); r.Status != lifecycle.Running || r.Stale || len(h.rec.notes(notify.KindStale)) != 0 {
		t.Fatalf("a CPU-bound agent was found stale: %s stale=%v", r.Status, r.Stale)
	}
}

// Activity as the record shows it: working while the log grows, silent
// when it stops.
func TestActivityWorkingThenSilent(t *testing.T) {
	h := newClaudeHarness(t)
	quiet := withID("quiet", sh("echo hello; exec sleep 300"))
	quiet.StaleCheck = store.Ptr(false) // silent, not yet flagged stale
	h.create(quiet)
	h.start("quiet")
	h.waitLog("quiet", "hello")
	h.e.PollLogsNow()
	if r := h.get("quiet"); r.Activity == nil || r.Activity.State != store.ActivityWorking {
		t.Fatalf("after output: %+v", r.Activity)
	}
	h.goStale()
	if r := h.get("quiet"); r.Activity == nil || r.Activity.State != store.ActivitySilent || r.Activity.Since == nil {
		t.Fatalf("after silence: %+v", r.Activity)
	}
}

// An idle agent's activity is pushed when it changes, not on every pass:
// once it is shown silent, the stale checks that find it silent again push
// nothing (at 1,000 idle agents each push was the engine's main cost).
func TestIdleActivityPushedOnlyWhenItChanges(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, func(c *Config) { c.Clock = clk; c.LogPoll = time.Hour })
	h.create(AgentSpec{ID: "idle", Command: "sleep", Args: []string{"1000"}})
	h.start("idle")
	h.waitStatus("idle", lifecycle.Running)
	pushes := func() (n int, last *store.Record) {
		h.rec.mu.Lock()
		defer h.rec.mu.Unlock()
		for _, r := range h.rec.states {
			if r.ID == "idle" {
				n, last = n+1, r
			}
		}
		return n, last
	}
	// Past the working window: silent, pushed once.
	clk.Advance(activeWindow + time.Second)
	if err := h.e.StaleCheckNow(h.project.ID); err != nil {
		t.Fatal(err)
	}
	n, last := pushes()
	if last == nil || last.Activity == nil || last.Activity.State != store.ActivitySilent {
		t.Fatalf("the silent agent was not shown silent: %+v", last)
	}
	// Silent still, pass after pass (short of the stale threshold).
	for i := 0; i < 5; i++ {
		clk.Advance(10 * time.Second)
		if err := h.e.StaleCheckNow(h.project.ID); err != nil {
			t.Fatal(err)
		}
	}
	if m, _ := pushes(); m != n {
		t.Fatalf("%d pushes of an agent silent as it was, want none", m-n)
	}
}
