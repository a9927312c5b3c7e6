package queue

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"shepherd/backend/lifecycle"
	"shepherd/backend/notify"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/errs"
	"shepherd/backend/supervisor/hook"
)

// Core is what the queue and the pause need of the engine's core.
type Core interface {
	Go(f func()) bool // a task of the engine's (never once it is closing)
	// Context ends when the engine closes.
	Context() context.Context
	Notify(n notify.Notification)
	NotifyNative(projectID string) bool
	Event(projectID string, ev store.Event)

	// Under the agent's lock:
	// Run starts a at once, as act says (its args or its resume args);
	// Enqueued records a's move to queued, with what to run when its turn
	// comes (act) and its place (seq); Unqueue takes a queued agent back to
	// the status it came from; Update changes fields; Show pushes a's
	// state (its place in the queue).
	Run(a hook.Agent, act string) error
	Enqueued(a hook.Agent, act string, seq int64) error
	Unqueue(a hook.Agent, reason string) error
	Update(a hook.Agent, mut func(*store.Record)) error
	Show(a hook.Agent)

	// Without any lock:
	// Agents is a project's agents; ProjectChanged pushes its state;
	// PauseAgent pauses a running agent (at its safe point unless now),
	// with the project when withProject; SignalPath is where the project's
	// pause signal file is, and WriteFile writes a file atomically.
	Agents(projectID string) []hook.Agent
	ProjectChanged(projectID string)
	PauseAgent(ctx context.Context, a hook.Agent, now bool, note string, withProject bool) (*store.Record, error)
	SignalPath(projectID string) string
	WriteFile(path string, data []byte) error
}

// Queues runs every project's queue and pause.
type Queues struct {
	core Core
	log  zerolog.Logger
}

// New returns the queues over core.
func New(core Core, log zerolog.Logger) *Queues { return &Queues{core: core, log: log} }

// Launch starts a (act says how) or, when its project is paused, held by
// its daily budget or at maxRunning, queues it. a's lock is held.
func (q *Queues) Launch(s *State, a hook.Agent, act string) error {
	r := a.Rec()
	id := r.ID
	switch {
	case a.Gone():
		return errs.Gone(id)
	case r.Status.Live():
		return errs.AgentRunning(id)
	case r.Status == lifecycle.Queued:
		return errs.New(errs.AlreadyRunning, "Process '%s' is already queued (position %d)", id, s.Position(a))
	}
	s.mu.Lock()
	room := s.room(false) && len(s.order) == 0 // first in, first out: no one jumps the queue
	if r.BudgetOnce && s.budget != nil && s.budget.Held() && s.room(true) {
		room = true // the one run the user let past the daily budget: the held queue is not its
	}
	if room {
		s.reserved++
	}
	s.mu.Unlock()
	if !room {
		return q.enqueue(s, a, act)
	}
	defer q.release(s)() // a failed start leaves its slot free
	return q.core.Run(a, act)
}

// enqueue puts a at the end of its project's queue. a's lock is held.
func (q *Queues) enqueue(s *State, a hook.Agent, act string) error {
	s.mu.Lock()
	s.nextSeq++
	seq := s.nextSeq
	s.mu.Unlock()
	if err := q.core.Enqueued(a, act, seq); err != nil {
		return err
	}
	s.mu.Lock()
	s.order = append(s.order, a)
	pos := len(s.order)
	s.mu.Unlock()
	r := a.Rec()
	q.log.Info().Str("project", r.ProjectID).Str("agent", r.ID).Int("position", pos).Str("action", act).Msg("queued")
	q.core.Show(a) // with its position
	q.Kick(s)      // a slot may have freed meanwhile
	return nil
}

// Cancel takes a queued agent back to the status it came from (reason says
// why). a's lock is held.
func (q *Queues) Cancel(s *State, a hook.Agent, reason string) error {
	err := q.core.Unqueue(a, reason)
	if err == nil {
		s.Dequeue(a)
		q.core.Go(func() { q.showQueue(s) }) // other agents' locks: not under this one's
	}
	return err
}

// Left takes an agent that is no longer queued (paused, removed) out of
// the queue and pushes the new places of the others. a's lock is held.
func (q *Queues) Left(s *State, a hook.Agent) {
	s.Dequeue(a)
	q.core.Go(func() { q.showQueue(s) })
}

// Kick gives free slots to the queue, off the caller's locks.
func (q *Queues) Kick(s *State) {
	s.mu.Lock()
	want := len(s.order) > 0 && s.room(false)
	s.mu.Unlock()
	if want {
		q.core.Go(func() { q.releaseQueue(s) })
	}
}

// Freed is CountLive's slot coming free: the queue gets it.
func (q *Queues) Freed(s *State, from, to lifecycle.Status) {
	if s.CountLive(from, to) {
		q.Kick(s)
	}
}

// Reserve keeps a slot of s for a start under way that is not queued (a
// stale agent's resume takes the slot of the run it replaces): the func it
// returns gives it back, to the queue.
func (q *Queues) Reserve(s *State) (release func()) {
	s.mu.Lock()
	s.reserved++
	s.mu.Unlock()
	return q.release(s)
}

func (q *Queues) release(s *State) func() {
	return func() {
		s.mu.Lock()
		s.reserved--
		s.mu.Unlock()
		q.Kick(s)
	}
}

// Drain keeps a slot of s for a run that ended while its shim still stops
// what it left in its group: the func it returns gives it back, to the
// queue.
func (q *Queues) Drain(s *State) (release func()) {
	s.mu.Lock()
	s.draining++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.draining--
		s.mu.Unlock()
		q.Kick(s)
	}
}

// releaseQueue starts queued agents, first in first out, while the project
// has room. The slot is reserved before the agent is started, so two
// releases at once never exceed maxRunning.
func (q *Queues) releaseQueue(s *State) {
	for {
		s.mu.Lock()
		if len(s.order) == 0 || !s.room(false) {
			s.mu.Unlock()
			return
		}
		a := s.order[0]
		s.order = s.order[1:]
		s.reserved++
		s.mu.Unlock()
		q.startQueued(a)
		s.mu.Lock()
		s.reserved--
		s.mu.Unlock()
		q.showQueue(s)
	}
}

// startQueued starts a queued agent whose turn has come. One that cannot be
// started goes back to the status it came from, with the reason (an unpause
// that fails stays paused, and says so).
func (q *Queues) startQueued(a hook.Agent) {
	a.Lock()
	defer a.Unlock()
	r := a.Rec()
	if a.Gone() || r.Status != lifecycle.Queued {
		return
	}
	act := r.QueuedAction
	err := q.core.Run(a, act)
	if err == nil {
		return
	}
	r = a.Rec()
	if r.Status == lifecycle.Queued {
		msg := err.Error()
		if uerr := q.core.Unqueue(a, "start failed"); uerr != nil {
			q.log.Error().Err(uerr).Str("agent", r.ID).Msg("cannot take a queued agent that failed to start out of the queue")
		}
		if uerr := q.core.Update(a, func(r *store.Record) { r.Error = msg }); uerr != nil {
			q.log.Error().Err(uerr).Str("agent", r.ID).Msg("cannot record why a queued agent failed to start")
		}
	}
	if act == Unpause || act == AutoResume {
		r = a.Rec()
		q.core.Notify(notify.Notification{Level: notify.Error, Kind: notify.KindFailed, Title: "Resume failed",
			ProjectID: r.ProjectID, AgentID: r.ID, Native: q.core.NotifyNative(r.ProjectID),
			Message: fmt.Sprintf("Agent %s could not be resumed: %v", r.ID, err)})
	}
}

// showQueue pushes the new places of the queued agents of s.
func (q *Queues) showQueue(s *State) {
	for _, a := range s.queued() {
		a.Lock()
		if a.Rec().Status == lifecycle.Queued {
			q.core.Show(a)
		}
		a.Unlock()
	}
}
