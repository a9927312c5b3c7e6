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
	add([]Status{NotStarted, Completed, Failed, Stopped, Interrupted, Paused}, Spawning)
	add([]Status{Spawning}, Running, NotStarted, Completed, Failed, Stopped, Interrupted, Paused)
	add([]Status{Running}, Completed, Failed, Stopping, TimedOut, Interrupted)
	add([]Status{TimedOut}, Stopping)
	add([]Status{Stopping}, Killing)
	add([]Status{Stopping, Killing}, Stopped, Paused)
	add([]Status{Interrupted}, Completed, Failed) // log analysis of an agent found dead
	add([]Status{Paused}, Failed)                 // paused past its expiry
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

func TestClasses(t *testing.T) {
	for _, s := range All {
		if s.Live() && s.Terminal() {
			t.Errorf("%s is both live and terminal", s)
		}
		if s.Startable() == s.Live() && s != NotStarted {
			// Every terminal status may be started; no live one may.
			t.Errorf("%s: startable=%v live=%v", s, s.Startable(), s.Live())
		}
	}
	if !NotStarted.Startable() || Running.Startable() || Killing.Startable() {
		t.Fatal("startable classes wrong")
	}
}
