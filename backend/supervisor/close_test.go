package supervisor

import (
	"context"
	"strings"
	"sync"
	"testing"

	"shepherd/backend/lifecycle"
	"shepherd/internal/testutil"
)

// LoadAll is one of the engine's tasks: a Close during a load returns only
// once the load has ended, so nothing of it is written after.
func TestCloseWaitsForLoadAll(t *testing.T) {
	h := newHarness(t)
	h.e.Close()
	synced := func() int { return strings.Count(h.events(), `"event":"project:synced"`) }
	closing := make(chan struct{})
	inLoad := make(chan struct{})
	e := h.engine()
	e.testHooks.loading = func(string) {
		close(inLoad)
		<-closing // Close has cancelled the engine and waits for its tasks (or not)
	}
	var once sync.Once
	e.testHooks.closing = func() { once.Do(func() { close(closing) }) }
	loaded := make(chan struct{})
	go func() {
		e.LoadAll()
		close(loaded)
	}()
	testutil.Receive(t, "the load to begin", inLoad)
	before := synced()
	e.Close()
	atClose := synced()
	testutil.Receive(t, "the load to end", loaded)
	if after := synced(); after != atClose || atClose != before+1 {
		t.Fatalf("project:synced lines: %d before Close, %d when it returned, %d once the load ended", before, atClose, after)
	}
}

// Every run the engine starts is counted on the record — starts, resumes,
// keep-alive restarts — and the count survives an engine restart; a record
// from before the count starts from what it shows.
func TestRunCount(t *testing.T) {
	h := newHarness(t)
	h.create(AgentSpec{ID: "a", Command: "/bin/sh", Args: []string{"-c", "echo run"}, ResumeArgs: []string{"-c", "echo resumed"}})
	h.start("a")
	h.waitStatus("a", lifecycle.Completed)
	h.start("a")
	h.waitStatus("a", lifecycle.Completed)
	if _, err := h.e.ResumeAgent(context.Background(), h.project.ID, "a"); err != nil {
		t.Fatal(err)
	}
	h.waitStatus("a", lifecycle.Completed)
	if n := h.get("a").RunCount; n != 3 {
		t.Fatalf("run count %d after two starts and a resume, want 3", n)
	}
	spec := withID("ka", sh("exit 1"))
	spec.KeepAlive = true
	h.create(spec)
	h.start("ka")
	testutil.Eventually(t, "a keep-alive restart", func() bool { return h.get("ka").RestartCount >= 1 && h.get("ka").RunCount >= 2 })

	h.e.Close()
	old := h.diskRecord("a")
	if old.RunCount != 3 {
		t.Fatalf("run count on disk %d, want 3", old.RunCount)
	}
	old.RunCount, old.RestartCount, old.ResumeCount = 0, 2, 1 // as an engine before the count wrote it
	if err := h.e.Store().SaveRecord(old); err != nil {
		t.Fatal(err)
	}
	h.e = h.engine()
	h.start("a")
	h.waitStatus("a", lifecycle.Completed)
	if n := h.get("a").RunCount; n != 5 {
		t.Fatalf("run count %d, want 5: the 4 the old record shows, and this one", n)
	}
}
