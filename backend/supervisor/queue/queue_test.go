package queue

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"shepherd/backend/lifecycle"
	"shepherd/backend/notify"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/hook"
	"shepherd/internal/testutil"
)

type fakeAgent struct {
	mu  sync.Mutex
	rec *store.Record
}

func (a *fakeAgent) Lock()              { a.mu.Lock() }
func (a *fakeAgent) Unlock()            { a.mu.Unlock() }
func (a *fakeAgent) Rec() *store.Record { return a.rec }
func (a *fakeAgent) Gone() bool         { return false }

// fakeCore runs what the queue starts by marking it running, and records
// the order of the starts.
type fakeCore struct {
	mu      sync.Mutex
	s       *State
	started []string
	agents  []hook.Agent
	signal  string
}

func (c *fakeCore) Go(f func()) bool                             { go f(); return true }
func (c *fakeCore) Context() context.Context                     { return context.Background() }
func (c *fakeCore) Notify(notify.Notification)                   {}
func (c *fakeCore) NotifyNative(string) bool                     { return false }
func (c *fakeCore) Event(string, store.Event)                    {}
func (c *fakeCore) Update(hook.Agent, func(*store.Record)) error { return nil }
func (c *fakeCore) Show(hook.Agent)                              {}
func (c *fakeCore) Agents(string) []hook.Agent                   { return c.agents }
func (c *fakeCore) ProjectChanged(string)                        {}
func (c *fakeCore) SignalPath(string) string                     { return c.signal }
func (c *fakeCore) WriteFile(p string, b []byte) error           { return os.WriteFile(p, b, 0o600) }
func (c *fakeCore) PauseAgent(_ context.Context, a hook.Agent, _ bool, _ string, _ bool) (*store.Record, error) {
	a.Lock()
	defer a.Unlock()
	c.move(a, lifecycle.Paused)
	now := time.Now()
	a.Rec().PausedAt, a.Rec().PausedWithProject = &now, true
	return a.Rec(), nil
}
func (c *fakeCore) move(a hook.Agent, to lifecycle.Status) {
	from := a.Rec().Status
	a.Rec().Status = to
	c.s.CountLive(from, to)
}
func (c *fakeCore) Run(a hook.Agent, act string) error {
	c.move(a, lifecycle.Running)
	c.mu.Lock()
	c.started = append(c.started, a.Rec().ID)
	c.mu.Unlock()
	return nil
}
func (c *fakeCore) Enqueued(a hook.Agent, act string, seq int64) error {
	a.Rec().QueuedFrom, a.Rec().QueuedAction, a.Rec().QueueSeq = a.Rec().Status, act, seq
	a.Rec().Status = lifecycle.Queued
	return nil
}
func (c *fakeCore) Unqueue(a hook.Agent, reason string) error {
	a.Rec().Status = a.Rec().QueuedFrom
	return nil
}
func (c *fakeCore) startedIDs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.started...)
}

type hold struct{ held bool }

func (h *hold) Held() bool { return h.held }

// maxRunning caps the live agents: the rest wait in order and start, first
// in first out, as slots free up; a paused project and one its daily budget
// holds start nothing, but the one run the user let past the budget starts.
func TestQueue(t *testing.T) {
	var s State
	c := &fakeCore{s: &s, signal: filepath.Join(t.TempDir(), SignalFile)}
	q := New(c, zerolog.Nop())
	budget := &hold{}
	s.Init(2, budget, 0, nil, 0)
	var as []*fakeAgent
	for _, id := range []string{"a", "b", "c", "d"} {
		a := &fakeAgent{rec: &store.Record{ID: id, Status: lifecycle.NotStarted}}
		as = append(as, a)
		c.agents = append(c.agents, a)
		a.Lock()
		if err := q.Launch(&s, a, Start); err != nil {
			t.Fatal(err)
		}
		a.Unlock()
	}
	if got := c.startedIDs(); len(got) != 2 || s.Position(as[2]) != 1 || s.Position(as[3]) != 2 {
		t.Fatalf("started %v, c at %d, d at %d", got, s.Position(as[2]), s.Position(as[3]))
	}
	as[2].Lock()
	err := q.Launch(&s, as[2], Start)
	as[2].Unlock()
	if err == nil {
		t.Fatal("a queued agent started twice")
	}
	// a ends: c's turn.
	as[0].Lock()
	from := as[0].rec.Status
	as[0].rec.Status = lifecycle.Completed
	q.Freed(&s, from, lifecycle.Completed)
	as[0].Unlock()
	testutil.Eventually(t, "c to start", func() bool { return len(c.startedIDs()) == 3 })
	if got := c.startedIDs(); got[2] != "c" || s.Position(as[3]) != 1 {
		t.Fatalf("started %v, d at %d", got, s.Position(as[3]))
	}

	// Held by the budget: nothing starts but the run let past it.
	budget.held = true
	e := &fakeAgent{rec: &store.Record{ID: "e", Status: lifecycle.NotStarted}}
	once := &fakeAgent{rec: &store.Record{ID: "once", Status: lifecycle.NotStarted, BudgetOnce: true}}
	s.SetMax(10)
	e.Lock()
	_ = q.Launch(&s, e, Start)
	e.Unlock()
	once.Lock()
	_ = q.Launch(&s, once, Start)
	once.Unlock()
	if e.rec.Status != lifecycle.Queued || once.rec.Status != lifecycle.Running {
		t.Fatalf("held: e %s, the run let past the budget %s", e.rec.Status, once.rec.Status)
	}
	budget.held = false

	// Paused: the running agents are paused; nothing starts until the
	// pause is lifted, and then the queue goes on.
	if _, err := q.Pause(context.Background(), &s, "p", "lunch", false, time.Now(), func(error) {}); err != nil {
		t.Fatal(err)
	}
	if paused, _, note, _ := s.Paused(); !paused || note != "lunch" {
		t.Fatalf("paused %v note %q", paused, note)
	}
	if b, err := os.ReadFile(c.signal); err != nil || string(b) != "lunch\n" {
		t.Fatalf("signal file %q %v", b, err)
	}
	q.Kick(&s)
	if e.rec.Status != lifecycle.Queued {
		t.Fatal("a paused project started its queue")
	}
	if err := q.Unpause(&s, "p", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.signal); !os.IsNotExist(err) {
		t.Fatalf("the signal file stayed: %v", err)
	}
	testutil.Eventually(t, "the queue to go on after the pause", func() bool {
		e.Lock()
		defer e.Unlock()
		return e.rec.Status == lifecycle.Running
	})
}

// A signal file made by hand pauses the project; removed, it resumes; one
// that cannot be read pauses it all the same, and says why.
func TestSignalFile(t *testing.T) {
	var s State
	c := &fakeCore{s: &s, signal: filepath.Join(t.TempDir(), SignalFile)}
	q := New(c, zerolog.Nop())
	s.Init(0, nil, 0, nil, 0)
	if s.LoadPause(c.signal) {
		t.Fatal("paused without a signal file")
	}
	if err := os.WriteFile(c.signal, []byte("  by hand \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	q.CheckSignal(&s, "p", c.signal, time.Now())
	if paused, _, note, _ := s.Paused(); !paused || note != "by hand" {
		t.Fatalf("paused %v, note %q", paused, note)
	}
	os.Remove(c.signal)
	q.CheckSignal(&s, "p", c.signal, time.Now())
	if paused, _, _, _ := s.Paused(); paused {
		t.Fatal("still paused once the file is gone")
	}
	if err := os.Mkdir(c.signal, 0o700); err != nil {
		t.Fatal(err)
	}
	q.CheckSignal(&s, "p", c.signal, time.Now())
	if paused, _, _, problem := s.Paused(); !paused || problem == "" {
		t.Fatalf("a folder for a signal: paused %v, problem %q", paused, problem)
	}
}
