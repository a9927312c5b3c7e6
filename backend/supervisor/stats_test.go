package supervisor

import (
	"testing"
	"time"

	"shepherd/backend/procid"
	"shepherd/internal/testutil"
)

// CPU and memory are sampled only while someone looks: a tree that burns a
// core shows about 100 %, its child's memory is in the sum, and once the
// look's lease ends nothing more is sampled.
func TestStatsWhileLooking(t *testing.T) {
	h := newClaudeHarness(t)
	h.create(withID("burn", sh(`sleep 300 & while :; do :; done`)))
	r := h.start("burn")
	h.create(withID("idle", sh("echo x")))
	testutil.Eventually(t, "the child", func() bool { return len(procid.Descendants(r.PID)) >= 1 })

	h.clk.Advance(10 * time.Second)
	h.settle()
	if n := h.e.Samples(); n != 0 {
		t.Fatalf("%d samples with nobody looking", n)
	}
	if err := h.e.Look(h.project.ID, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // real time for the tree to use CPU between two readings
	h.clk.Advance(StatsInterval)
	h.settle()
	got := h.get("burn").Stats
	if got == nil || got.CPUPercent == nil {
		t.Fatalf("no stats while looking: %+v", got)
	}
	// A busy loop gets what the machine gives it: on a loaded machine less
	// than a core, but far from an idle tree's 0.
	if *got.CPUPercent < 15 || *got.CPUPercent > 210 {
		t.Fatalf("a tree burning one core shows %.0f %% CPU", *got.CPUPercent)
	}
	u, _ := procid.TreeUsage(r.PID)
	if got.Processes < 2 || got.RSSBytes < u.RSS/2 {
		t.Fatalf("stats %+v, tree %+v: the child is not in the sum", got, u)
	}
	if hist, _ := h.e.StatsHistory(h.project.ID, "burn"); len(hist) < 2 {
		t.Fatalf("history: %d samples", len(hist))
	}
	if hist, err := h.e.StatsHistory(h.project.ID, "idle"); err != nil || len(hist) != 0 {
		t.Fatalf("history of an agent that is not running: %v %v", hist, err)
	}
	// The lease ends: sampling stops.
	h.clk.Advance(20 * time.Second)
	h.settle()
	n := h.e.Samples()
	h.clk.Advance(30 * time.Second)
	h.settle()
	if h.e.Samples() != n {
		t.Fatalf("sampling went on after the look ended: %d → %d", n, h.e.Samples())
	}
	if h.get("burn").Stats != nil {
		t.Fatal("stale stats still shown")
	}
}
