package cli

import (
	"strings"
	"testing"

	"shepherd/backend/store"
)

// pause/unpause and the run queue through the CLI, as a user types them.
func TestPauseAndQueueCLI(t *testing.T) {
	p := isolate(t)
	serve(t, p)
	var proj store.Project
	okJSON(t, &proj, "add-project", t.TempDir(), "--name", "q")
	ok(t, "settings", "q", "--maxRunning", "1")
	for _, id := range []string{"a", "b", "c"} {
		ok(t, "create", "q", id, "--grace", "1", "--", "/bin/sh", "-c", "exec sleep 300")
		ok(t, "start", "q", id)
	}
	out := ok(t, "ls", "q")
	for _, want := range []string{"queued · 1st", "queued · 2nd"} {
		if !strings.Contains(out, want) {
			t.Fatalf("ls lacks %q:\n%s", want, out)
		}
	}
	if out := ok(t, "projects"); !strings.Contains(out, "1/1") || !strings.Contains(out, "active") {
		t.Fatalf("projects:\n%s", out)
	}
	ok(t, "create", "q", "d", "--", "/bin/sh", "-c", "exit 0")
	fails(t, 1, "Agent 'd' is not running", "pause", "q", "d", "--now")
	fails(t, 1, "Agent 'a' is not paused", "unpause", "q", "a")
	if out := ok(t, "pause", "q", "--note", "lunch", "--now"); !strings.Contains(out, "1 agent(s) paused") {
		t.Fatalf("pause: %q", out)
	}
	if out := ok(t, "projects"); !strings.Contains(out, "paused since") || !strings.Contains(out, "lunch") {
		t.Fatalf("projects while paused:\n%s", out)
	}
	if r := record(t, "q", "a"); r.Status != "paused" || r.PauseNote != "lunch" {
		t.Fatalf("a: %s %q", r.Status, r.PauseNote)
	}
	if out := ok(t, "unpause", "q"); !strings.Contains(out, "Project resumed") {
		t.Fatalf("unpause: %q", out)
	}
	waitStatus(t, "q", "b", "running")
	if r := record(t, "q", "a"); r.Status != "queued" || r.QueuePosition != 2 {
		t.Fatalf("a after unpause: %s %d", r.Status, r.QueuePosition)
	}
	ok(t, "stop-all", "q")
	for _, id := range []string{"a", "b", "c", "d"} {
		if r := record(t, "q", id); r.Status.Live() || r.Status == "queued" {
			t.Fatalf("%s after stop-all: %s", id, r.Status)
		}
	}
}
