package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/notify"
	"shepherd/internal/testutil"
)

func TestBackoff(t *testing.T) {
	want := []time.Duration{2, 4, 8, 16, 32, 60, 60, 60}
	for n, w := range want {
		if got := backoff(n); got != w*time.Second {
			t.Fatalf("backoff(%d) = %s, want %s", n, got, w*time.Second)
		}
	}
}

// waitNextRestart waits for a pending keep-alive restart and returns its
// delay on the fake clock.
func (h *claudeHarness) waitNextRestart(id string, restarts int) time.Duration {
	h.t.Helper()
	var d time.Duration
	testutil.Eventually(h.t, "restart scheduled", func() bool {
		r := h.get(id)
		if r.RestartCount != restarts || r.NextRestartAt == nil || r.Status.Live() {
			return false
		}
		d = r.NextRestartAt.Sub(h.clk.Now())
		return true
	})
	return d
}

// A crash loop: restarts after 2, 4, 8, … s, at most 60 s (fake clock);
// the backoff survives an engine restart; a stable run resets it.
func TestKeepAliveCrashLoop(t *testing.T) {
	h := newClaudeHarness(t)
	h.create(AgentSpec{ID: "loop", Command: "/bin/sh", Args: []string{"-c", "echo run; exit 1"}, KeepAlive: true})
	h.start("loop")
	var got []time.Duration
	for i := 0; i < 7; i++ {
		d := h.waitNextRestart("loop", i)
		got = append(got, d)
		h.clk.Advance(d)
	}
	want := []time.Duration{2, 4, 8, 16, 32, 60, 60}
	for i := range want {
		if got[i].Round(time.Second) != want[i]*time.Second {
			t.Fatalf("restart delays %v, want %v (s)", got, want)
		}
	}
	// The engine goes away with a restart pending; the next one keeps the
	// backoff (the same restart time), not a fresh 2 s.
	d := h.waitNextRestart("loop", 7)
	pending := *h.get("loop").NextRestartAt
	if d.Round(time.Second) != 60*time.Second {
		t.Fatalf("pending delay %s", d)
	}
	h.e.Close()
	h.e = h.engine(func(c *Config) { c.Clock = h.clk })
	sum, err := h.e.SelectProject(context.Background(), h.project.ID)
	if err != nil || sum.Counts[OutcomeKeepAlive] != 1 {
		t.Fatalf("select: %v %+v", err, sum)
	}
	if r := h.get("loop"); r.NextRestartAt == nil || !r.NextRestartAt.Equal(pending) || r.RestartFailureCount != 8 {
		t.Fatalf("after engine restart: next %v (want %v) failures %d", r.NextRestartAt, pending, r.RestartFailureCount)
	}
	h.clk.Advance(d)
	testutil.Eventually(t, "restart after engine restart", func() bool { return h.get("loop").RestartCount == 8 })

	// A user stop cancels a pending restart and keep-alive leaves it alone.
	h.waitNextRestart("loop", 8)
	if _, err := h.e.StopAgent(context.Background(), h.project.ID, "loop", nil); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(time.Hour)
	h.settle()
	if r := h.get("loop"); r.RestartCount != 8 || r.Desired != lifecycle.DesiredStopped || r.NextRestartAt != nil {
		t.Fatalf("after stop: restarts %d desired %s next %v", r.RestartCount, r.Desired, r.NextRestartAt)
	}
}

func TestKeepAliveStableRunResetsBackoff(t *testing.T) {
	h := newClaudeHarness(t)
	marker := h.project.Path + "/crash"
	h.create(AgentSpec{ID: "svc", Command: "/bin/sh", KeepAlive: true,
		Args: []string{"-c", "while [ ! -e " + marker + " ]; do sleep 0.02; done; exit 1"}})
	writeMarker := func(on bool) {
		if on {
			writeFile(t, marker)
		} else {
			removeFile(marker)
		}
	}
	writeMarker(true)
	h.start("svc")
	for i := 0; i < 3; i++ { // three quick crashes: backoff at 8 s next
		h.clk.Advance(h.waitNextRestart("svc", i))
	}
	// This run stays up: the marker is gone.
	writeMarker(false)
	testutil.Eventually(t, "running", func() bool { return h.get("svc").RestartCount == 3 && h.get("svc").Status == lifecycle.Running })
	// Not the first crashes' marker: let the run start before recreating it.
	if r := h.get("svc"); r.RestartFailureCount != 3 {
		t.Fatalf("failures %d", r.RestartFailureCount)
	}
	h.clk.Advance(61 * time.Second)
	testutil.Eventually(t, "backoff reset", func() bool { return h.get("svc").RestartFailureCount == 0 })
	writeMarker(true)
	if d := h.waitNextRestart("svc", 3); d.Round(time.Second) != 2*time.Second {
		t.Fatalf("after a stable run the delay is %s, want 2s", d)
	}
}

// A crash loop is calm: the first failure is notified at once, the next
// ones within the minute come as one ("loop failed 4 more times in 1 min"),
// and from the fifth crash in a row the agent is `crash loop` in Needs you
// with its next try shown.
func TestCrashLoopStormIsCalm(t *testing.T) {
	clk := newFakeClock()
	h := &claudeHarness{harness: newHarness(t, func(c *Config) { c.Clock = clk; c.NotifyWindow = time.Minute }), clk: clk}
	code := filepath.Join(t.TempDir(), "code")
	os.WriteFile(code, []byte("1"), 0o600)
	h.create(AgentSpec{ID: "loop", Command: "/bin/sh", Args: []string{"-c", `exit "$(cat "$0")"`, code}, KeepAlive: true})
	h.start("loop")
	for i := 0; i < 4; i++ { // crashes 1–4, restarts after 2+4+8+16 s
		h.clk.Advance(h.waitNextRestart("loop", i))
	}
	h.waitNextRestart("loop", 4) // the fifth crash: 30 s after the first
	if n := len(h.rec.notes(notify.KindFailed)); n != 1 {
		t.Fatalf("%d failure notifications within the minute, want 1", n)
	}
	r := h.get("loop")
	if !strings.HasPrefix(r.Attention, "crash loop: 5 crashes in a row, next try in 32s") {
		t.Fatalf("attention %q", r.Attention)
	}
	h.clk.Advance(30 * time.Second) // the minute ends
	testutil.Eventually(t, "the storm's summary", func() bool { return len(h.rec.notes(notify.KindFailed)) == 2 })
	if n := h.rec.notes(notify.KindFailed)[1]; n.Title != "loop failed 4 more times in 1 min" {
		t.Fatalf("summary %+v", n)
	}
	// Acknowledged, the loop leaves Needs you, and stays out of it while
	// it goes on crashing the same way: no notification, no attention (the
	// record still counts the crashes).
	if _, err := h.e.AckAgent(h.project.ID, "loop"); err != nil {
		t.Fatal(err)
	}
	if r := h.get("loop"); r.Attention != "" {
		t.Fatalf("after ack: %q", r.Attention)
	}
	notes := len(h.rec.notes(notify.KindFailed))
	for i := 5; i < 8; i++ {
		h.clk.Advance(h.waitNextRestart("loop", i-1))
		h.waitNextRestart("loop", i)
	}
	h.clk.Advance(30 * time.Second) // a coalescing window ends; the next try is 60 s away
	h.settle()
	if r := h.get("loop"); r.Attention != "" || r.RestartFailureCount < 8 {
		t.Fatalf("after three more crashes of the acknowledged loop: attention %q, failures %d", r.Attention, r.RestartFailureCount)
	}
	if n := len(h.rec.notes(notify.KindFailed)); n != notes {
		t.Fatalf("%d failure notifications for the acknowledged loop", n-notes)
	}
	if !strings.Contains(h.events(), `"acknowledged":true`) {
		t.Fatal("the quiet crashes are not marked acknowledged in the events")
	}
	// The loop changes (another exit code): it needs the user again.
	os.WriteFile(code, []byte("3"), 0o600)
	n := h.get("loop").RestartCount
	h.clk.Advance(h.waitNextRestart("loop", n))
	h.waitNextRestart("loop", n+1)
	if r := h.get("loop"); !strings.HasPrefix(r.Attention, "crash loop") {
		t.Fatalf("after the loop changed: %q %+v\n%s", r.Attention, r, h.events())
	}
}

// An acknowledged crash loop's acknowledgment ends with the loop: once a
// run stays up, the next failure needs the user.
func TestAckedCrashLoopEndsWithTheLoop(t *testing.T) {
	h := newClaudeHarness(t)
	marker := h.project.Path + "/crash"
	writeFile(t, marker)
	h.create(AgentSpec{ID: "svc", Command: "/bin/sh", KeepAlive: true,
		Args: []string{"-c", "while [ ! -e " + marker + " ]; do sleep 0.02; done; exit 1"}})
	h.start("svc")
	for i := 0; i < 4; i++ {
		h.clk.Advance(h.waitNextRestart("svc", i))
	}
	d := h.waitNextRestart("svc", 4) // the fifth crash: a loop
	if _, err := h.e.AckAgent(h.project.ID, "svc"); err != nil {
		t.Fatal(err)
	}
	if r := h.get("svc"); r.AckLoop == "" || r.Attention != "" {
		t.Fatalf("after ack: loop %q attention %q", r.AckLoop, r.Attention)
	}
	removeFile(marker)
	h.clk.Advance(d)
	testutil.Eventually(t, "running", func() bool { return h.get("svc").Status == lifecycle.Running })
	h.clk.Advance(61 * time.Second)
	testutil.Eventually(t, "the loop over", func() bool { return h.get("svc").RestartFailureCount == 0 })
	if r := h.get("svc"); r.AckLoop != "" || r.AcknowledgedAt != nil {
		t.Fatalf("the acknowledgment outlived the loop: %q %v", r.AckLoop, r.AcknowledgedAt)
	}
	writeFile(t, marker)
	h.waitNextRestart("svc", 5)
	if ev := h.events(); strings.Contains(ev, `"acknowledged":true`) {
		t.Fatalf("a failure after the loop ended was taken as acknowledged:\n%s", ev)
	}
}
