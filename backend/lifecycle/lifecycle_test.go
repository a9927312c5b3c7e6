package lifecycle

import (
	"errors"
	"testing"
)

// The table of SPEC "States", written out again independently: every pair
// of statuses is either in it (allowed) or refused with ErrRefused.
func TestEveryTransition(t *testing.T) {
	allowed := map[[2]Status]bool{}
	add := func(from []Status, to ...Status) {
		for _, f := range from {
			for _, s := range to {
				allowed[[2]Status{f, s}] = true
			}
		}
	}
	add([]Status{NotStarted, Completed, Failed, Stopped, Interrupted, Paused}, Spawning, Queued)
	add([]Status{Queued}, Spawning, Paused)
	add([]Status{Spawning}, Running)
	add([]Status{Running}, Completed, Failed, Stopping, TimedOut, Interrupted)
	add([]Status{TimedOut}, Stopping)
	add([]Status{Stopping}, Killing)
	add([]Status{Stopping, Killing}, Stopped, Paused)
	add([]Status{Interrupted}, Completed, Failed) // log analysis of an agent found dead
	add([]Status{Paused}, Failed)                 // paused past its expiry
	add([]Status{Failed, Interrupted}, Stopped)   // a stop during keep-alive backoff
	add([]Status{Paused}, Stopped)                // a budget pause answered with stop
	n := 0
	for _, from := range All {
		for _, to := range All {
			err := Check(from, to)
			if allowed[[2]Status{from, to}] {
				n++
				if err != nil {
					t.Errorf("%s → %s refused: %v", from, to, err)
				}
				continue
			}
			if !errors.Is(err, ErrRefused) {
				t.Errorf("%s → %s allowed, want refused", from, to)
			}
		}
	}
	if n != len(allowed) {
		t.Fatalf("checked %d allowed moves, table has %d", n, len(allowed))
	}
	if err := Check("bogus", Running); !errors.Is(err, ErrRefused) {
		t.Fatal("unknown status accepted")
	}
}

// A failed spawn goes back to the status it came from, and only to one the
// agent can have been in before spawning.
func TestRevert(t *testing.T) {
	back := map[Status]bool{NotStarted: true, Completed: true, Failed: true, Stopped: true, Interrupted: true, Paused: true}
	for _, from := range All {
		for _, to := range All {
			err := CheckRevert(from, to)
			if (from == Spawning || from == Queued) && back[to] {
				if err != nil {
					t.Errorf("revert %s → %s refused: %v", from, to, err)
				}
				continue
			}
			if !errors.Is(err, ErrRefused) {
				t.Errorf("revert %s → %s allowed, want refused", from, to)
			}
		}
	}
	if err := CheckRevert(Spawning, "bogus"); !errors.Is(err, ErrRefused) {
		t.Fatal("revert to an unknown status accepted")
	}
}

func TestReasons(t *testing.T) {
	for _, r := range Reasons {
		if !ValidReason(r) {
			t.Errorf("%q not valid", r)
		}
	}
	if ValidReason("bogus") {
		t.Fatal("unknown reason accepted")
	}
}

func TestClasses(t *testing.T) {
	for _, s := range All {
		if s.Live() && s.Terminal() {
			t.Errorf("%s is both live and terminal", s)
		}
		if s.Startable() == s.Live() && s != NotStarted && s != Queued {
			// Every terminal status may be started; no live one may.
			t.Errorf("%s: startable=%v live=%v", s, s.Startable(), s.Live())
		}
	}
	if !NotStarted.Startable() || Running.Startable() || Killing.Startable() {
		t.Fatal("startable classes wrong")
	}
}
