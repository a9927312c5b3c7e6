package supervisor

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/notify"
	"shepherd/backend/procid"
	"shepherd/internal/testutil"
)

func TestWatchdogFindsOrphanOnce(t *testing.T) {
	h := newClaudeHarness(t)
	h.create(withID("gen", sh("exec sleep 300")))
	r := h.start("gen")
	// Layer 1 sees this exit; the watchdog must not handle it again.
	syscall.Kill(r.PID, syscall.SIGKILL)
	h.clk.Advance(30 * time.Second)
	h.waitStatus("gen", lifecycle.Failed)
	h.clk.Advance(30 * time.Second) // a second watchdog pass
	h.settle()
	if ev := h.events(); strings.Contains(ev, "orphaned") || strings.Count(ev, `"from":"running"`) != 1 {
		t.Fatalf("exit handled twice:\n%s", ev)
	}

	// Now an exit layer 1 cannot see: the watcher is stopped for this run
	// (as when an engine's exit notification is lost). Its shim recorded the
	// exit, so the status follows it.
	h.create(withID("blind", sh("exec sleep 300")))
	r = h.start("blind")
	_, a, _ := h.e.agent(h.project.ID, "blind")
	a.mu.Lock()
	blind := newRun(h.e.runner.Attach(a.run.p.Identity))
	a.run = blind
	a.mu.Unlock()
	syscall.Kill(r.PID, syscall.SIGKILL)
	testutil.Eventually(t, "process gone", func() bool { return !procid.Alive(r.PID) })
	// The first pass that finds it gone leaves layer 1 the interval; the
	// second records it.
	h.e.WatchdogNow(h.project.ID)
	if r := h.get("blind"); r.Status != lifecycle.Running {
		t.Fatalf("orphaned on the first sighting: %s", r.Status)
	}
	h.e.WatchdogNow(h.project.ID)
	got := h.waitStatus("blind", lifecycle.Failed)
	if got.ExitReason != lifecycle.ReasonOrphaned || got.Signal != "SIGKILL" {
		t.Fatalf("orphan: %s %q", got.ExitReason, got.Signal)
	}
	if !strings.Contains(h.events(), `"from":"running","to":"interrupted","reason":"watchdog"`) {
		t.Fatal("no orphan transition")
	}
	testutil.Eventually(t, "failure notice", func() bool {
		n := h.rec.notes(notify.KindFailed)
		return len(n) == 2 && n[1].AgentID == "blind"
	})

	// And with no exit status at all (its shim was killed too): interrupted,
	// and a notice, as it cannot be resumed.
	h.create(withID("lost", sh("exec sleep 300")))
	r = h.start("lost")
	_, a, _ = h.e.agent(h.project.ID, "lost")
	a.mu.Lock()
	a.run = newRun(h.e.runner.Attach(a.run.p.Identity))
	a.mu.Unlock()
	syscall.Kill(r.ShimPID, syscall.SIGKILL)
	syscall.Kill(r.PID, syscall.SIGKILL)
	testutil.Eventually(t, "process gone", func() bool { return !procid.Alive(r.PID) })
	h.e.WatchdogNow(h.project.ID)
	h.e.WatchdogNow(h.project.ID)
	got = h.waitStatus("lost", lifecycle.Interrupted)
	if got.ExitReason != lifecycle.ReasonOrphaned || !strings.Contains(got.Error, "detected by watchdog") {
		t.Fatalf("orphan: %s %q", got.ExitReason, got.Error)
	}
	testutil.Eventually(t, "interrupted notice", func() bool { return len(h.rec.notes(notify.KindInterrupted)) == 1 })
}

// A process alive for an agent whose status is terminal is killed, but only
// when pid and start time match.
func TestWatchdogKillsZombieProcessOfTerminalAgent(t *testing.T) {
	h := newClaudeHarness(t)
	h.create(withID("z", sh("exec sleep 300")))
	r := h.start("z")
	_, a, _ := h.e.agent(h.project.ID, "z")
	// Pretend the engine recorded an end that did not happen.
	a.mu.Lock()
	a.run = nil
	a.rec.Status = lifecycle.Completed
	a.mu.Unlock()
	h.clk.Advance(30 * time.Second)
	testutil.Eventually(t, "zombie killed", func() bool { return !procid.Alive(r.PID) })
	// The event is written once the kill is done: the process can be seen
	// gone a moment before.
	testutil.Eventually(t, "the watchdog:kill event", func() bool {
		return strings.Contains(h.events(), `"event":"watchdog:kill"`)
	})
}
