package supervisor

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestPassesShareOneWakeup: the watchdog passes of projects loaded a second
// apart are run by the engine's one timer at the same wakeup (the later
// project's first pass is due with the first's, within early() of its
// interval), and from then on they are due together, their interval apart;
// the stale checks keep theirs.
func TestPassesShareOneWakeup(t *testing.T) {
	h := newClaudeHarness(t) // watchdog every 30 s, stale check every 1 s
	h.clk.Advance(time.Second)
	h.settle()
	p2, _, err := h.e.AddProject(t.TempDir(), "two")
	if err != nil {
		t.Fatal(err)
	}
	s := DefaultSettings()
	s.StaleCheckIntervalSec = 1
	if _, err := h.e.PutSettings(p2.ID, s); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.SelectProject(context.Background(), p2.ID); err != nil {
		t.Fatal(err)
	}
	// The first project's watchdog is due at 30 s, the second's at 31 s.
	for i := 0; i < 29; i++ {
		h.clk.Advance(time.Second)
		h.settle()
	}
	now := h.clk.Now()
	h.e.mon.mu.Lock()
	defer h.e.mon.mu.Unlock()
	if len(h.e.mon.all) != 2 {
		t.Fatalf("%d projects monitored, want 2", len(h.e.mon.all))
	}
	for m := range h.e.mon.all {
		if want := now.Add(30 * time.Second); !m.watchAt.Equal(want) {
			t.Errorf("project %s: next watchdog pass in %v, want 30s (both passes run at this wakeup)",
				m.p.info.Name, m.watchAt.Sub(now))
		}
		if m.staleAt.After(now.Add(time.Second)) {
			t.Errorf("project %s: next stale check in %v, want within its 1 s interval", m.p.info.Name, m.staleAt.Sub(now))
		}
	}
	if h.e.mon.timer == nil {
		t.Fatal("no timer armed for the next passes")
	}
}

// TestAfterPasses: the hook is called after a wakeup that ran passes.
func TestAfterPasses(t *testing.T) {
	clk := newFakeClock()
	var calls atomic.Int32
	h := newHarness(t, func(c *Config) { c.Clock, c.AfterPasses = clk, func() { calls.Add(1) } })
	if _, err := h.e.SelectProject(context.Background(), h.project.ID); err != nil {
		t.Fatal(err)
	}
	clk.Advance(30 * time.Second) // the first watchdog pass
	h.settle()
	if calls.Load() != 1 {
		t.Fatalf("AfterPasses called %d times after one wakeup, want 1", calls.Load())
	}
}
