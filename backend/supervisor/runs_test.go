package supervisor

import (
	"testing"

	"shepherd/backend/lifecycle"
)

// An agent's runs come from its events: each start with its reason and where
// its lines begin in the log, each end with its status and exit code; an
// unknown agent is not found.
func TestRuns(t *testing.T) {
	h := newHarness(t)
	h.create(withID("twice", sh("echo run; exit 3")))
	if runs, err := h.e.Runs(h.project.ID, "twice"); err != nil || len(runs) != 0 {
		t.Fatalf("before a start: %+v, %v", runs, err)
	}
	for i := 0; i < 2; i++ {
		h.start("twice")
		h.waitStatus("twice", lifecycle.Failed)
	}
	runs, err := h.e.Runs(h.project.ID, "twice")
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs = %+v, %v", runs, err)
	}
	for i, r := range runs {
		if r.N != i+1 || r.Reason != "start" || r.End != "failed" || r.EndedAt == nil || r.ExitCode == nil || *r.ExitCode != 3 ||
			r.LogOffset == nil || r.StartedAt.IsZero() {
			t.Errorf("run %d = %+v", i+1, r)
		}
	}
	if *runs[1].LogOffset <= *runs[0].LogOffset {
		t.Errorf("the second run's lines begin at %d, not after the first's (%d)", *runs[1].LogOffset, *runs[0].LogOffset)
	}
	_, err = h.e.Runs(h.project.ID, "nobody")
	wantKind(t, err, ErrNotFound, "Process 'nobody' not found")
}
