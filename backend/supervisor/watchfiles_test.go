package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/internal/testutil"
)

// With WatchFiles the engine sees a log grow and a pause signal file come
// and go at once, without polling: its clock (a fake one here) never moves
// after the start, so no poll can have run — only the kernel's file-change
// notification can have told it.
func TestWatchFilesWithoutPolling(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, func(c *Config) { c.Clock = clk; c.WatchFiles = true })
	h.create(withID("a", sh("exec sleep 300")))
	r := h.start("a")
	h.waitStatus("a", lifecycle.Running)
	// Later than the start by less than any timer's interval: nothing fires.
	clk.Advance(5 * time.Second)
	at := clk.Now().UTC()
	f, err := os.OpenFile(r.LogPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("working\n"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the log's growth to be seen", func() bool {
		act := h.get("a").Activity
		return act != nil && act.Since != nil && act.Since.Equal(at)
	})

	sig := filepath.Join(h.e.Store().ProjectDir(h.project.ID), "pause_signal")
	if err := os.WriteFile(sig, []byte("lunch\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the project to pause on its signal file", func() bool {
		v, _ := h.e.ProjectState(h.project.ID)
		return v.Paused && v.PauseNote == "lunch"
	})
	if err := os.Remove(sig); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the project to resume when its signal file is removed", func() bool {
		v, _ := h.e.ProjectState(h.project.ID)
		return !v.Paused
	})
}

// What an agent writes before its log is watched is read at once, not at
// its next write: a Claude agent that starts, is rate-limited and then
// writes nothing reads `waiting: rate limit …` with the clock standing still.
func TestWatchFilesReadsWhatCameBefore(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, func(c *Config) { c.Clock = clk; c.WatchFiles = true })
	h.create(AgentSpec{ID: "r", Command: fakeClaude, Profile: "claude-stream-json",
		Args: []string{"-p", "--verbose", "--output-format", "stream-json", "go"},
		Env:  map[string]string{"FAKE_CLAUDE_MODE": "rate-limit", "FAKE_CLAUDE_TOOL_SECONDS": "300"}})
	h.start("r")
	testutil.Eventually(t, "the rate limit read without another write", func() bool {
		act := h.get("r").Activity
		return act != nil && act.State == "waiting"
	})
}

// The engine's own pause writes the signal file, which the file watch sees
// at once: that is not taken for a second pause, so the pause itself pauses
// every running agent and says so (and unpause resumes them).
func TestPauseWithWatchedSignal(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.WatchFiles = true })
	for _, id := range []string{"a", "b", "c"} {
		h.create(withID(id, sh("exec sleep 300")))
		h.start(id)
	}
	for round := 0; round < 3; round++ {
		res, err := h.e.PauseProject(context.Background(), h.project.ID, "", true)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 3 {
			t.Fatalf("round %d: the pause paused %d agents, want 3: %+v", round, len(res), res)
		}
		for _, r := range res {
			if r.Error != "" || r.Record == nil || r.Record.Status != lifecycle.Paused {
				t.Fatalf("round %d: %+v", round, r)
			}
		}
		if err := h.e.UnpauseProject(context.Background(), h.project.ID); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"a", "b", "c"} {
			h.waitStatus(id, lifecycle.Running)
		}
	}
}
