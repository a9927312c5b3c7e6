package supervisor

import (
	"path/filepath"
	"strings"
	"testing"

	"shepherd/backend/lifecycle"
	"shepherd/backend/presets"
	"shepherd/backend/store"
	"shepherd/internal/testutil"
)

// codex creates and starts the fake Codex CLI as the codex preset would.
func (h *claudeHarness) codex(id, mode, resumeMode string, env map[string]string) *store.Record {
	h.t.Helper()
	args, resume := presets.Codex.Args("fix it", "", nil)
	e := map[string]string{"FAKE_CODEX_MODE": mode, "FAKE_CODEX_RESUME_MODE": resumeMode, "FAKE_CODEX_RECORD": h.record}
	for k, v := range env {
		e[k] = v
	}
	h.create(AgentSpec{ID: id, Command: fakeCodex, Cwd: h.cwd, Profile: store.ProfileCodexJSON, Args: args, ResumeArgs: resume,
		Env: e, GraceSec: 1})
	return h.start(id)
}

func TestCodexOutcomes(t *testing.T) {
	h := newClaudeHarness(t)
	h.codex("ok", "success", "", nil)
	r := h.waitStatus("ok", lifecycle.Completed)
	if !strings.HasPrefix(r.SessionID, "0199a213-") || r.LastResult == nil || r.LastResult.OutputTokens != 50 ||
		r.LastResult.CostUSD != nil || r.LastResult.ReasoningTokens != 20 {
		t.Fatalf("success: session %q figures %+v", r.SessionID, r.LastResult)
	}
	h.codex("bad", "turn-failed", "", nil)
	r = h.waitStatus("bad", lifecycle.Failed)
	if !strings.Contains(r.Error, "401 Unauthorized") {
		t.Fatalf("turn.failed: error %q", r.Error)
	}
	h.codex("warn", "warning", "", nil)
	if r = h.waitStatus("warn", lifecycle.Completed); r.ExitReason != lifecycle.ReasonCompleted {
		t.Fatalf("a warning item only: %s", r.ExitReason)
	}
}

// A silent Codex run is found stale, killed and resumed with
// `resume <thread_id>` in its own cwd, and completes.
func TestCodexSilentIsResumed(t *testing.T) {
	h := newClaudeHarness(t)
	first := h.codex("a", "silent", "success", nil)
	testutil.Eventually(t, "its thread id", func() bool { h.e.PollLogsNow(); return h.get("a").SessionID != "" })
	sid := h.get("a").SessionID
	h.waitSession("a", sid)
	h.goStale()
	r := h.waitStatus("a", lifecycle.Completed)
	if r.AutoResumeCount != 1 || r.SessionID != sid || r.PID == first.PID {
		t.Fatalf("after recovery: %+v", r)
	}
	inv := h.invocations()
	if len(inv) != 2 || inv[1].Resume != sid || inv[1].Cwd != h.cwd || strings.Join(inv[1].Args, " ") != "exec --json resume "+sid+" continue" {
		t.Fatalf("invocations %+v", inv)
	}
}

// A long command_execution is a tool call in flight: busy, not stale.
func TestCodexLongCommandIsBusy(t *testing.T) {
	h := newClaudeHarness(t)
	release := filepath.Join(t.TempDir(), "release")
	h.codex("a", "long-command", "", map[string]string{"FAKE_CODEX_RELEASE": release})
	testutil.Eventually(t, "the command in flight", func() bool {
		h.e.PollLogsNow()
		_, a, _ := h.e.agent(h.project.ID, "a")
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.run == nil {
			return false
		}
		_, _, ok := a.run.inFlight()
		return ok
	})
	h.goStale()
	if r := h.get("a"); r.Status != lifecycle.Running || r.Activity == nil || r.Activity.State != store.ActivityBusy || r.Activity.Tool != "make" {
		t.Fatalf("during the command: %s %+v", r.Status, r.Activity)
	}
	writeFile(t, release) // the command ends
	r := h.waitStatus("a", lifecycle.Completed)
	if r.AutoResumeCount != 0 {
		t.Fatalf("a busy Codex agent was resumed")
	}
}
