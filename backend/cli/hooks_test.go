package cli

import (
	"os"
	"strings"
	"testing"
	"time"

	"shepherd/backend/store"
)

// A hook speaks for the agent whose credential posts it, and only for it:
// the agent reads `waiting: permission for Bash` and needs the user; the
// user's own agent beside it is untouched; the user's token cannot post a
// hook; the CLI acknowledges it.
func TestHookSpeaksForItsAgentOnly(t *testing.T) {
	a := newArena(t)
	a.spawn("asker", []string{"@network"}, "hook-user:"+a.p.EngineFile(), "hook:Bash", "wait")
	var r store.Record
	deadline := time.Now().Add(15 * time.Second)
	for {
		r = record(t, "arena", "asker")
		if r.Activity != nil && r.Activity.State == store.ActivityWaiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("asker never waited: %+v\nits log:\n%s", r.Activity, readLog(t, r.LogPath))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r.Attention != "waiting: permission for Bash" {
		t.Fatalf("attention %q", r.Attention)
	}
	if u := record(t, "arena", "users"); u.Activity != nil && u.Activity.State == store.ActivityWaiting || u.Attention != "" {
		t.Fatalf("the user's agent changed: %+v %q", u.Activity, u.Attention)
	}
	out := ok(t, "ack", "arena", "asker")
	if !strings.Contains(out, "Acknowledged asker") {
		t.Fatalf("ack said %q", out)
	}
	if r := record(t, "arena", "asker"); r.Attention != "" || r.AcknowledgedAt == nil {
		t.Fatalf("after ack: %q", r.Attention)
	}
	// The user's token was refused (the engine.json it read is hidden from
	// the sandbox, or the route refuses the user's token).
	deadline = time.Now().Add(5 * time.Second)
	var log string
	for !strings.Contains(log, "hook-user") && time.Now().Before(deadline) {
		log = readLog(t, r.LogPath)
		time.Sleep(20 * time.Millisecond)
	}
	refused(t, log, "hook-user:"+a.p.EngineFile())
	worked(t, log, "hook:Bash")
	fails(t, 1, "needs nothing of you", "ack", "arena", "users")
}

func readLog(t *testing.T, path string) string {
	t.Helper()
	b, _ := os.ReadFile(path)
	return string(b)
}
