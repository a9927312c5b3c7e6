package usagelimit

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// ErrNoReset is Wait's refusal of a limit that names no reset: such a run
// is a failure to show, not a wait.
var ErrNoReset = errors.New("the usage limit names no reset")

// Config tunes the Scheduler; zero fields take the defaults.
type Config struct {
	// Batch is how many agents of one account are resumed together
	// (default 2).
	Batch int
	// Stagger is the time between two batches of one account (default
	// 2 min): long enough for a refusal of the first to show before the
	// next go.
	Stagger time.Duration
	// Grace is the wait after a reset before the first batch (default
	// 30 s): the clocks of the machine and of the service differ a little.
	Grace time.Duration
	// Refusal is how soon after its resumption a new refusal of an agent
	// means the window has not reset after all (default 10 min): the agent,
	// and its account's others, then wait for the next reset instead of
	// being resumed into a refusal again.
	Refusal time.Duration
}

func (c Config) withDefaults() Config {
	if c.Batch <= 0 {
		c.Batch = 2
	}
	if c.Stagger <= 0 {
		c.Stagger = 2 * time.Minute
	}
	if c.Grace < 0 {
		c.Grace = 0
	} else if c.Grace == 0 {
		c.Grace = 30 * time.Second
	}
	if c.Refusal <= 0 {
		c.Refusal = 10 * time.Minute
	}
	return c
}

// Waiting is one agent waiting for its account's window to reset.
type Waiting struct {
	Account string    `json:"account"`
	Agent   string    `json:"agent"`
	Limit   Limit     `json:"limit"`
	Until   time.Time `json:"until"`   // when it is resumed at the earliest
	Since   time.Time `json:"since"`   // when it began to wait (its place in line)
	Refused int       `json:"refused"` // refusals right after a resumption, in a row
}

// Resume is called, outside the Scheduler's lock, for each agent whose
// wait is over; the caller resumes it in its session (through the queue).
type Resume func(w Waiting)

// Scheduler resumes the agents that wait for a usage limit after their
// account's reset: a few at a time (Batch, every Stagger), in the order
// they began to wait, never in a burst that burns the fresh window. A
// refusal right after a resumption (within Refusal) is not a loop: the
// account waits for the next reset. Time comes from the clock.
type Scheduler struct {
	clock  clockwork.Clock
	cfg    Config
	resume Resume

	mu       sync.Mutex
	waiting  map[string]*Waiting // by agent
	resumed  map[string]resumed  // agents resumed lately, by agent
	accounts map[string]*account
	stopped  bool
}

type resumed struct {
	at      time.Time // when
	since   time.Time // its place in line
	refused int
	until   time.Time // the time it was resumed after
}

type account struct {
	blockedUntil time.Time       // no resumption before (a refusal after a resumption)
	next         time.Time       // when the timer fires
	timer        clockwork.Timer // nil: none
}

// NewScheduler returns a Scheduler that calls resume.
func NewScheduler(clock clockwork.Clock, cfg Config, resume Resume) *Scheduler {
	return &Scheduler{clock: clock, cfg: cfg.withDefaults(), resume: resume,
		waiting: map[string]*Waiting{}, resumed: map[string]resumed{}, accounts: map[string]*account{}}
}

// Wait puts agent in line for account's reset. It returns when the agent
// will be resumed at the earliest. A limit with no reset is ErrNoReset; one
// whose reset has passed (the engine was down over it) is due at once. A
// refusal within Refusal of the agent's resumption waits for the next
// reset (the one it names if that is later, else one window on) and holds
// the account's other agents until then too. Waiting again replaces an
// agent's earlier wait.
func (s *Scheduler) Wait(acct, agent string, l Limit) (time.Time, error) {
	if l.ResetsAt.IsZero() {
		return time.Time{}, fmt.Errorf("agent %s: %w", agent, ErrNoReset)
	}
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return time.Time{}, errors.New("the usage-limit scheduler is stopped")
	}
	a := s.account(acct)
	until := l.ResetsAt.Add(s.cfg.Grace)
	w := &Waiting{Account: acct, Agent: agent, Limit: l, Since: now}
	if old := s.waiting[agent]; old != nil {
		w.Since, w.Refused = old.Since, old.Refused
	}
	r, wasResumed := s.resumed[agent]
	if wasResumed && now.Sub(r.at) < s.cfg.Refusal {
		// Refused right after its resumption: the window did not reset as
		// it said. The agent keeps its place in line and waits for the
		// next reset (the one the refusal names if it is later, else one
		// window on), and so do its account's others.
		w.Since, w.Refused = r.since, r.refused+1
		if !until.After(r.until) || !until.After(now) {
			until = nextReset(l, now).Add(s.cfg.Grace)
		}
		s.block(acct, a, until)
	}
	if until.Before(a.blockedUntil) {
		until = a.blockedUntil
	}
	w.Until = until
	delete(s.resumed, agent)
	s.waiting[agent] = w
	s.schedule(acct, a)
	return until, nil
}

// nextReset is the reset after a limit's, when its own has passed: one
// window later, repeatedly, until it is ahead of now (an hour when the
// window is unknown).
func nextReset(l Limit, now time.Time) time.Time {
	p := Period(l.Window)
	if p == 0 {
		p = time.Hour
	}
	t := l.ResetsAt
	if !t.After(now) {
		n := now.Sub(t)/p + 1
		t = t.Add(n * p)
	}
	return t
}

// block holds account's resumptions until t, and says so in its agents'
// Until (s.mu held).
func (s *Scheduler) block(name string, a *account, t time.Time) {
	if !t.After(a.blockedUntil) {
		return
	}
	a.blockedUntil = t
	for _, w := range s.waiting {
		if w.Account == name && w.Until.Before(t) {
			w.Until = t
		}
	}
}

func (s *Scheduler) account(name string) *account {
	a := s.accounts[name]
	if a == nil {
		a = &account{}
		s.accounts[name] = a
	}
	return a
}

// schedule sets account's timer for its earliest due agent (s.mu held).
func (s *Scheduler) schedule(name string, a *account) {
	var first time.Time
	for _, w := range s.waiting {
		if w.Account == name && (first.IsZero() || w.Until.Before(first)) {
			first = w.Until
		}
	}
	if first.IsZero() {
		if a.timer != nil {
			a.timer.Stop()
			a.timer = nil
		}
		return
	}
	if first.Before(a.blockedUntil) {
		first = a.blockedUntil
	}
	if a.timer != nil && !a.next.After(first) {
		return // it fires at or before then; the step reschedules
	}
	if a.timer != nil {
		a.timer.Stop()
	}
	a.next = first
	// The clock, not the caller's now: a step may run a little after its
	// time.
	d := first.Sub(s.clock.Now())
	if d < 0 {
		d = 0
	}
	a.timer = s.clock.AfterFunc(d, func() { s.step(name) })
}

// step resumes the next batch of account's due agents, and sets the timer
// for the batch after it (one Stagger later) or for the next reset.
func (s *Scheduler) step(name string) {
	now := s.clock.Now()
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	a := s.account(name)
	a.timer = nil
	if now.Before(a.blockedUntil) {
		s.schedule(name, a)
		s.mu.Unlock()
		return
	}
	var due []*Waiting
	for _, w := range s.waiting {
		if w.Account == name && !w.Until.After(now) {
			due = append(due, w)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if !due[i].Since.Equal(due[j].Since) {
			return due[i].Since.Before(due[j].Since)
		}
		return due[i].Agent < due[j].Agent
	})
	if len(due) > s.cfg.Batch {
		due = due[:s.cfg.Batch]
	}
	out := make([]Waiting, 0, len(due))
	for _, w := range due {
		delete(s.waiting, w.Agent)
		s.resumed[w.Agent] = resumed{at: now, since: w.Since, refused: w.Refused, until: w.Until}
		out = append(out, *w)
	}
	// The next batch of this account waits one Stagger, whatever its own
	// reset says.
	if len(out) > 0 {
		s.block(name, a, now.Add(s.cfg.Stagger))
	}
	s.schedule(name, a)
	s.forgetOld(now)
	s.mu.Unlock()
	for _, w := range out {
		s.resume(w)
	}
}

// forgetOld drops resumptions older than Refusal (s.mu held).
func (s *Scheduler) forgetOld(now time.Time) {
	for id, r := range s.resumed {
		if now.Sub(r.at) >= s.cfg.Refusal {
			delete(s.resumed, id)
		}
	}
}

// Forget takes agent out of line (stopped, removed, or resumed by the
// user) and forgets its recent resumption. It reports whether it waited.
func (s *Scheduler) Forget(agent string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.resumed, agent)
	w := s.waiting[agent]
	if w == nil {
		return false
	}
	delete(s.waiting, agent)
	s.schedule(w.Account, s.account(w.Account))
	return true
}

// Until is when agent will be resumed at the earliest, if it waits.
func (s *Scheduler) Until(agent string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.waiting[agent]
	if w == nil {
		return time.Time{}, false
	}
	return w.Until, true
}

// Waiting lists the agents in line, by account then place in line.
func (s *Scheduler) Waiting() []Waiting {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Waiting, 0, len(s.waiting))
	for _, w := range s.waiting {
		out = append(out, *w)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Account != out[j].Account {
			return out[i].Account < out[j].Account
		}
		if !out[i].Since.Equal(out[j].Since) {
			return out[i].Since.Before(out[j].Since)
		}
		return out[i].Agent < out[j].Agent
	})
	return out
}

// Stop stops the timers; nothing is resumed after it.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	for _, a := range s.accounts {
		if a.timer != nil {
			a.timer.Stop()
			a.timer = nil
		}
	}
}
