// Package queue is a project's run queue and its pause (SPEC "Pause and
// resume").
//
// maxRunning caps how many agents of a project are live at once. Every way
// an agent is started — start, resume, auto-resume, keep-alive restart,
// auto start, unpause — goes through Launch, which starts it at once or
// queues it; a slot that frees up goes to the first in the queue. A paused
// project starts nothing: its starts wait in the queue; so do those of a
// project its daily budget holds. The queue is in the records (status
// queued, its place and what to run), so it survives an engine restart in
// order.
//
// A project is paused while the file pause_signal exists in its data
// folder — the seed's signal file, which a script may create or remove, and
// which the window, the CLI and the API create and remove too — so the
// pause survives an engine restart. Its text is the pause note.
package queue

import (
	"sync"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/supervisor/hook"
)

// What a start runs, and how it counts (the record's queuedAction).
const (
	Start      = "start"                 // its args; auto-resume count back to 0
	Resume     = "resume"                // its resume args; a manual resume resets the auto-resume count
	AutoResume = "auto-resume"           // its resume args; auto-resume count + 1
	KeepAlive  = "keep-alive restart"    // its args; restart count + 1
	AutoStart  = "auto start on restore" // its args
	Unpause    = "unpause"               // its resume args when resumable, else its args; resume count + 1
)

// Holder holds a project's starts while Held (its daily budget reached).
type Holder interface{ Held() bool }

// State is one project's run queue and pause. Safe for concurrent use; its
// lock is a leaf.
type State struct {
	mu sync.Mutex
	// live counts the agents whose status is live (CountLive keeps it),
	// reserved the starts under way that are not live yet, draining the
	// runs that ended while their shim still stops what they left in their
	// group; order holds the queued agents in order.
	live, reserved, draining int
	order                    []hook.Agent
	nextSeq                  int64
	max                      int    // maxRunning (0: no cap)
	budget                   Holder // the daily budget's hold (nil: none)
	pause                    pause
}

// Init sets up a project's state at its load: its cap, its budget's hold,
// how many of its agents are live and which are queued (in their order:
// their records' queueSeq, ascending).
func (s *State) Init(max int, budget Holder, live int, queued []hook.Agent, lastSeq int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.max, s.budget, s.live, s.order = max, budget, live, queued
	s.nextSeq = max64(s.nextSeq, lastSeq)
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// SetMax changes maxRunning (0: no cap).
func (s *State) SetMax(n int) {
	s.mu.Lock()
	s.max = n
	s.mu.Unlock()
}

// room reports whether the project may start one more agent now; past the
// daily budget's hold with pastBudget (the one run the user let past it).
// s.mu is held.
func (s *State) room(pastBudget bool) bool {
	if !pastBudget && s.budget != nil && s.budget.Held() {
		return false
	}
	return !s.pause.paused && (s.max == 0 || s.live+s.reserved+s.draining < s.max)
}

// Counts are the project's live and queued agents and its cap.
func (s *State) Counts() (live, queued, max int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live, len(s.order), s.max
}

// Position is a queued agent's place in the queue (from 1; 0: not queued).
func (s *State) Position(a hook.Agent) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, q := range s.order {
		if q == a {
			return i + 1
		}
	}
	return 0
}

// Dequeue takes a out of the queue (a stop, a pause, a remove).
func (s *State) Dequeue(a hook.Agent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, q := range s.order {
		if q == a {
			s.order = append(s.order[:i], s.order[i+1:]...)
			return
		}
	}
}

// queued is a copy of the queue, in order.
func (s *State) queued() []hook.Agent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hook.Agent(nil), s.order...)
}

// CountLive keeps the live count true to the statuses: the core calls it
// for every change of status. It reports whether a slot freed up.
func (s *State) CountLive(from, to lifecycle.Status) bool {
	if from.Live() == to.Live() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if to.Live() {
		s.live++
		return false
	}
	s.live--
	return true
}

// pause is a project's pause, under State.mu.
type pause struct {
	paused  bool
	at      time.Time
	note    string
	problem string  // the file could not be read (a folder, no permission): paused all the same
	seen    fileSig // what the watcher saw last
	writes  int     // the engine's own writes of the file under way: a watch must not take them for a signal
}

// Paused is the project's pause: whether it is paused, since when, its note
// and what is wrong with its signal file ("" if nothing).
func (s *State) Paused() (paused bool, at time.Time, note, problem string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pause.paused, s.pause.at, s.pause.note, s.pause.problem
}
