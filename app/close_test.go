package app

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"shepherd/backend/store"
	"shepherd/backend/supervisor"
	"shepherd/internal/testutil"
)

// Closing the window hides it and the engine keeps supervising: an agent
// that hangs afterwards is still found stale, killed, resumed, and the user
// notified. (Real time: the one slow test of this wiring.)
func TestClosedWindowStillSupervises(t *testing.T) {
	a, rec := startApp(t)
	hidden := 0
	a.hideFn = func(context.Context) { hidden++ }
	if !OnBeforeClose(a)(context.Background()) || hidden != 1 {
		t.Fatalf("close: not prevented, or window not hidden (%d)", hidden)
	}
	if st, err := a.Engine(); err != nil || st.State != EngineEmbedded {
		t.Fatalf("engine after close: %+v %v", st, err)
	}

	bin := filepath.Join(t.TempDir(), "claude")
	if out, err := exec.Command("go", "build", "-o", bin, "shepherd/backend/supervisor/testdata/fakeclaude").CombinedOutput(); err != nil {
		t.Fatalf("build the fake Claude: %v\n%s", err, out)
	}
	dir := t.TempDir()
	p := addProject(t, a, dir, "night")
	if err := call(a, "putSettings", map[string]any{"project": p.ID}, map[string]int{"staleCheckIntervalSec": 1, "staleThresholdSec": 1}, nil); err != nil {
		t.Fatal(err)
	}
	rf := filepath.Join(t.TempDir(), "runs")
	if err := call(a, "createAgent", map[string]any{"project": p.ID}, supervisor.AgentSpec{ID: "hung", Command: bin, Profile: store.ProfileClaudeJSON,
		Args:       []string{"-p", "--verbose", "--output-format", "stream-json", "fix it"},
		ResumeArgs: []string{"-p", "--verbose", "--output-format", "stream-json", "--resume", "{sessionId}", "--", "continue"},
		Env:        map[string]string{"FAKE_CLAUDE_MODE": "silent", "FAKE_CLAUDE_RESUME_MODE": "success", "FAKE_CLAUDE_RECORD": rf},
		GraceSec:   1}, nil); err != nil {
		t.Fatal(err)
	}
	if err := call(a, "startAgent", agentParams(p.ID, "hung"), nil, nil); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the hung agent resumed and completed", func() bool {
		var r store.Record
		err := call(a, "getAgent", agentParams(p.ID, "hung"), nil, &r)
		return err == nil && r.Status == "completed" && r.AutoResumeCount == 1
	})
	testutil.Eventually(t, "a notification", func() bool { return rec.count("notify") > 0 })
	if b, _ := os.ReadFile(rf); len(b) == 0 {
		t.Fatal("the fake Claude did not run")
	}
}
