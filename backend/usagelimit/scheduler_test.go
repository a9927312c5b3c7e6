package usagelimit

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

type resumes struct {
	mu  sync.Mutex
	got []Waiting
	ch  chan Waiting
}

func newResumes() *resumes { return &resumes{ch: make(chan Waiting, 64)} }

func (r *resumes) resume(w Waiting) {
	r.mu.Lock()
	r.got = append(r.got, w)
	r.mu.Unlock()
	r.ch <- w
}

func (r *resumes) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// take waits for n resumptions and returns their agents in order.
func (r *resumes) take(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for i := 0; i < n; i++ {
		select {
		case w := <-r.ch:
			out = append(out, w.Agent)
		case <-t.Context().Done():
			t.Fatalf("only %d of %d resumed", i, n)
		}
	}
	return out
}

// advanceTo moves the fake clock to at, letting each timer that falls due
// on the way fire.
func advanceTo(clk *clockwork.FakeClock, at time.Time) {
	if d := at.Sub(clk.Now()); d > 0 {
		clk.Advance(d)
	}
}

func limitAt(reset time.Time) Limit {
	return Limit{Kind: KindEvent, ResetsAt: reset, Window: FiveHour, Utilization: -1}
}

// Five agents of one account wait for one reset: after it they are
// resumed two at a time, a Stagger apart, in the order they began to wait;
// another account's agent is not held back by them.
func TestSchedulerStaggers(t *testing.T) {
	start := utc("2025-11-28T05:00:00Z")
	clk := clockwork.NewFakeClockAt(start)
	rs := newResumes()
	s := NewScheduler(clk, Config{Batch: 2, Stagger: 2 * time.Minute, Grace: 30 * time.Second}, rs.resume)
	defer s.Stop()
	reset := utc("2025-11-28T08:41:00Z")
	for i := 1; i <= 5; i++ {
		until, err := s.Wait("me", fmt.Sprintf("a%d", i), limitAt(reset))
		if err != nil || !until.Equal(reset.Add(30*time.Second)) {
			t.Fatalf("until %v, %v", until, err)
		}
		clk.Advance(time.Second) // their order in line
	}
	if _, err := s.Wait("you", "b1", limitAt(reset.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if got := len(s.Waiting()); got != 6 {
		t.Fatalf("%d waiting", got)
	}
	advanceTo(clk, reset)
	if n := rs.count(); n != 0 {
		t.Fatalf("%d resumed before the reset and its grace", n)
	}
	advanceTo(clk, reset.Add(30*time.Second))
	if got := rs.take(t, 2); got[0] != "a1" || got[1] != "a2" {
		t.Fatalf("first batch %v", got)
	}
	if n := rs.count(); n != 2 {
		t.Fatalf("%d resumed in the first batch", n)
	}
	advanceTo(clk, reset.Add(30*time.Second+2*time.Minute-time.Second))
	if n := rs.count(); n != 2 {
		t.Fatalf("the second batch came before the stagger: %d", n)
	}
	clk.Advance(time.Second)
	if got := rs.take(t, 2); got[0] != "a3" || got[1] != "a4" {
		t.Fatalf("second batch %v", got)
	}
	clk.Advance(2 * time.Minute)
	if got := rs.take(t, 1); got[0] != "a5" {
		t.Fatalf("third batch %v", got)
	}
	if _, ok := s.Until("b1"); !ok {
		t.Fatal("the other account's agent left early")
	}
	advanceTo(clk, reset.Add(time.Hour+30*time.Second))
	if got := rs.take(t, 1); got[0] != "b1" {
		t.Fatalf("other account %v", got)
	}
	if n := len(s.Waiting()); n != 0 {
		t.Fatalf("%d still waiting", n)
	}
}

// A refusal right after a resumption is not a loop: the agent waits for
// the next reset (one window on), at the head of its line, and the
// account's others wait with it; a later refusal, long after, is a new
// wait of its own.
func TestSchedulerSecondRefusalWaitsForNextReset(t *testing.T) {
	start := utc("2025-11-28T05:00:00Z")
	clk := clockwork.NewFakeClockAt(start)
	rs := newResumes()
	s := NewScheduler(clk, Config{Batch: 1, Stagger: time.Minute, Grace: 30 * time.Second, Refusal: 10 * time.Minute}, rs.resume)
	defer s.Stop()
	reset := utc("2025-11-28T08:41:00Z")
	s.Wait("me", "a1", limitAt(reset))
	clk.Advance(time.Second)
	s.Wait("me", "a2", limitAt(reset))
	advanceTo(clk, reset.Add(30*time.Second))
	if got := rs.take(t, 1); got[0] != "a1" {
		t.Fatal(got)
	}
	// a1's resumed run is refused at once, naming the reset that passed.
	clk.Advance(20 * time.Second)
	until, err := s.Wait("me", "a1", limitAt(reset))
	next := reset.Add(5 * time.Hour).Add(30 * time.Second)
	if err != nil || !until.Equal(next) {
		t.Fatalf("until %v (%v), want the next reset %v", until, err, next)
	}
	// a2 is not resumed into the same refusal when its stagger comes.
	clk.Advance(10 * time.Minute)
	if err := clk.BlockUntilContext(t.Context(), 1); err != nil { // its step has set the next timer
		t.Fatal(err)
	}
	if n := rs.count(); n != 1 {
		t.Fatalf("%d resumed after a refusal", n)
	}
	if u, _ := s.Until("a2"); !u.Equal(next) {
		t.Fatalf("a2 waits until %v, want %v", u, next)
	}
	ws := s.Waiting()
	if len(ws) != 2 || ws[0].Agent != "a1" || ws[0].Refused != 1 {
		t.Fatalf("line %+v", ws)
	}
	advanceTo(clk, next)
	if got := rs.take(t, 1); got[0] != "a1" {
		t.Fatalf("first after the next reset: %v", got)
	}
	clk.Advance(time.Minute)
	if got := rs.take(t, 1); got[0] != "a2" {
		t.Fatal(got)
	}
	// Long after its resumption, a refusal with a later reset is a plain wait.
	clk.Advance(time.Hour)
	later := clk.Now().Add(2 * time.Hour)
	until, _ = s.Wait("me", "a1", limitAt(later))
	if !until.Equal(later.Add(30 * time.Second)) {
		t.Fatalf("until %v", until)
	}
}

// A refusal right after a resumption that names a later reset (the next
// window) is taken as it says.
func TestSchedulerRefusalNamingLaterReset(t *testing.T) {
	clk := clockwork.NewFakeClockAt(utc("2025-11-28T05:00:00Z"))
	rs := newResumes()
	s := NewScheduler(clk, Config{Grace: time.Second}, rs.resume)
	defer s.Stop()
	reset := utc("2025-11-28T06:00:00Z")
	s.Wait("me", "a1", limitAt(reset))
	advanceTo(clk, reset.Add(time.Second))
	rs.take(t, 1)
	weekly := Limit{Kind: KindEvent, ResetsAt: utc("2025-12-01T09:00:00Z"), Window: SevenDay}
	until, _ := s.Wait("me", "a1", weekly)
	if !until.Equal(weekly.ResetsAt.Add(time.Second)) {
		t.Fatalf("until %v", until)
	}
}

// The engine was down over the reset: the wait is due at once.
func TestSchedulerResetPassed(t *testing.T) {
	clk := clockwork.NewFakeClockAt(utc("2025-11-28T10:00:00Z"))
	rs := newResumes()
	s := NewScheduler(clk, Config{}, rs.resume)
	defer s.Stop()
	if _, err := s.Wait("me", "a1", limitAt(utc("2025-11-28T08:41:00Z"))); err != nil {
		t.Fatal(err)
	}
	if got := rs.take(t, 1); got[0] != "a1" {
		t.Fatal(got)
	}
}

func TestSchedulerForgetAndErrors(t *testing.T) {
	clk := clockwork.NewFakeClockAt(utc("2025-11-28T05:00:00Z"))
	rs := newResumes()
	s := NewScheduler(clk, Config{Grace: -1}, rs.resume)
	if _, err := s.Wait("me", "a1", Limit{Kind: KindResult}); !errors.Is(err, ErrNoReset) {
		t.Fatalf("no reset: %v", err)
	}
	reset := utc("2025-11-28T06:00:00Z")
	s.Wait("me", "a1", limitAt(reset))
	s.Wait("me", "a2", limitAt(reset))
	if !s.Forget("a1") || s.Forget("a1") {
		t.Fatal("Forget")
	}
	advanceTo(clk, reset) // Grace -1: none
	if got := rs.take(t, 1); got[0] != "a2" {
		t.Fatal(got)
	}
	clk.Advance(time.Hour)
	if n := rs.count(); n != 1 {
		t.Fatalf("a forgotten agent was resumed: %d", n)
	}
	// Waiting again replaces the earlier wait.
	s.Wait("me", "a3", limitAt(clk.Now().Add(time.Hour)))
	s.Wait("me", "a3", limitAt(clk.Now().Add(2*time.Hour)))
	if ws := s.Waiting(); len(ws) != 1 || !ws[0].Until.Equal(clk.Now().Add(2*time.Hour)) {
		t.Fatalf("%+v", ws)
	}
	s.Stop()
	clk.Advance(3 * time.Hour)
	if n := rs.count(); n != 1 {
		t.Fatalf("resumed after Stop: %d", n)
	}
	if _, err := s.Wait("me", "a4", limitAt(clk.Now().Add(time.Hour))); err == nil {
		t.Fatal("a stopped scheduler takes waits")
	}
}
