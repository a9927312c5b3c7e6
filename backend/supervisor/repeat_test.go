package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/notify"
	"shepherd/backend/store"
	"shepherd/internal/testutil"
)

// recoveries counts the agent's recovery lines in events.jsonl.
func (h *harness) recoveries(id string) int {
	h.t.Helper()
	n := 0
	for _, l := range strings.Split(h.events(), "\n") {
		if strings.Contains(l, `"event":"recovery"`) && strings.Contains(l, `"agentId":"`+id+`"`) {
			n++
		}
	}
	return n
}

// The feed records changes, not repeats (SPEC "Attention"): a quiet agent
// checked every few seconds for a minute is one finding — one event, one
// notification — acknowledged or not; it is a new finding only once it has
// written again and gone quiet again.
func TestStaleFindingIsOneEntryUntilItChanges(t *testing.T) {
	h := newClaudeHarness(t)
	fifo := filepath.Join(t.TempDir(), "wake")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Asleep without using CPU; it writes one line each time the fifo gets one.
	h.create(withID("quiet", sh(`exec 3<>"`+fifo+`"; while read -r x <&3; do echo "woke $x"; done`)))
	h.start("quiet")

	h.goStale()
	testutil.Eventually(t, "the stale finding", func() bool { return h.get("quiet").Stale })
	// A minute of checks at 10 s intervals (the harness checks every second).
	for range 6 {
		h.clk.Advance(10 * time.Second)
		h.settle()
	}
	if n := h.recoveries("quiet"); n != 1 {
		t.Fatalf("%d recovery events after a minute of silence, want 1:\n%s", n, h.events())
	}
	if n := len(h.rec.notes(notify.KindStale)); n != 1 {
		t.Fatalf("%d stale notifications, want 1", n)
	}
	ev := h.events()
	if !strings.Contains(ev, `"silentSec":`) {
		t.Fatalf("the finding does not say how long the agent was silent:\n%s", ev)
	}

	// Acknowledged: nothing more while it stays the same.
	if _, err := h.e.AckAgent(h.project.ID, "quiet"); err != nil {
		t.Fatal(err)
	}
	for range 6 {
		h.clk.Advance(10 * time.Second)
		h.settle()
	}
	if n := h.recoveries("quiet"); n != 1 {
		t.Fatalf("%d recovery events after the acknowledgment, want 1", n)
	}
	if r := h.get("quiet"); r.Attention != "" || !r.Stale || r.Status != lifecycle.Running {
		t.Fatalf("acknowledged: attention %q stale %v %s", r.Attention, r.Stale, r.Status)
	}

	// It writes: no longer stale. Quiet again: a new finding, which needs
	// the user again.
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("1\n")
	testutil.Eventually(t, "activity", func() bool {
		h.e.PollLogsNow()
		return !h.get("quiet").Stale
	})
	h.goStale()
	testutil.Eventually(t, "the second finding", func() bool { return h.get("quiet").Stale })
	h.settle()
	if n := h.recoveries("quiet"); n != 2 {
		t.Fatalf("%d recovery events after a second silence, want 2", n)
	}
	if r := h.get("quiet"); r.Attention != "silent, left running" {
		t.Fatalf("a new finding after the acknowledgment: attention %q", r.Attention)
	}
	if n := h.rec.notes(notify.KindStale); len(n) != 2 || !strings.Contains(n[1].Message, "silent for 1") {
		t.Fatalf("stale notifications %+v", n)
	}
}

// A silence is said in the unit of its limit: "30 s", not "0 min".
func TestSilenceText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Second:                      "30 s",
		59*time.Second + 600*time.Millisecond: "1 min",
		5*time.Minute + 12*time.Second:        "5 min",
		2 * time.Hour:                         "2 h",
		2*time.Hour + 5*time.Minute:           "2 h 5 min",
	} {
		if got := silenceText(d); got != want {
			t.Errorf("silenceText(%v) = %q, want %q", d, got, want)
		}
	}
	if got := staleMessage("q", 30*time.Second, store.OnStaleFlag); !strings.Contains(got, "silent for 30 s") {
		t.Errorf("staleMessage: %q", got)
	}
}
