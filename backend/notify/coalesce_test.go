package notify

import (
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

type sink struct {
	mu  sync.Mutex
	got []Notification
	ch  chan struct{}
}

func (s *sink) out(n Notification) {
	s.mu.Lock()
	s.got = append(s.got, n)
	s.mu.Unlock()
	s.ch <- struct{}{}
}

func (s *sink) all() []Notification {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Notification(nil), s.got...)
}

// A crash loop's storm: the first failure at once, the next four within
// the minute held and sent as one at the minute's end; another agent and a
// notification naming none are not held back by it.
func TestCoalescerStorm(t *testing.T) {
	clk := clockwork.NewFakeClock()
	s := &sink{ch: make(chan struct{}, 16)}
	c := NewCoalescer(clk, time.Minute, s.out)
	fail := func(agent string) Notification {
		return Notification{Level: Error, Kind: KindFailed, Title: "Agent failed", ProjectID: "p", AgentID: agent, Message: "exit code 1"}
	}
	c.Notify(fail("ka"))
	<-s.ch
	for i := 0; i < 4; i++ {
		clk.Advance(10 * time.Second)
		c.Notify(fail("ka"))
	}
	c.Notify(fail("other"))
	<-s.ch
	c.Notify(Notification{Level: Info, Title: "engine"})
	<-s.ch
	if got := s.all(); len(got) != 3 {
		t.Fatalf("%d sent before the minute ended, want 3: %+v", len(got), got)
	}
	if err := clk.BlockUntilContext(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clk.Advance(20 * time.Second) // the minute since the first ends
	<-s.ch
	got := s.all()
	if len(got) != 4 || got[3].AgentID != "ka" || got[3].Title != "ka failed 4 more times in 1 min" || got[3].Level != Error {
		t.Fatalf("summary %+v", got[len(got)-1])
	}
	// A minute later the next one goes out at once again.
	clk.Advance(time.Minute)
	c.Notify(fail("ka"))
	<-s.ch
	if n := len(s.all()); n != 5 {
		t.Fatalf("%d sent, want 5", n)
	}
}

func TestSummaryMixed(t *testing.T) {
	n := Summary([]Notification{{Level: Warning, Kind: KindStale, AgentID: "a", Title: "Agent silent"},
		{Level: Info, Kind: KindResumed, AgentID: "a", Title: "Agent resumed", Message: "resumed"}}, time.Minute)
	if n.Level != Warning || n.Title != "a: 2 more notices in 1 min" || n.Message != "Latest: Agent resumed — resumed" {
		t.Fatalf("%+v", n)
	}
}

// Nothing goes out after Stop: not what was held, not a summary whose timer
// fires, not a notification given later; and Stop returns only once a send
// under way has ended.
func TestNothingAfterStop(t *testing.T) {
	clk := clockwork.NewFakeClock()
	var mu sync.Mutex
	var got []Notification
	entered, proceed := make(chan struct{}), make(chan struct{})
	c := NewCoalescer(clk, time.Minute, func(n Notification) {
		if n.Title == "slow" {
			close(entered)
			<-proceed
		}
		mu.Lock()
		got = append(got, n)
		mu.Unlock()
	})
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(got)
	}
	c.Notify(Notification{AgentID: "a", Title: "first"})
	c.Notify(Notification{AgentID: "a", Title: "held"}) // held for the window's summary
	go c.Notify(Notification{Title: "slow"})            // no agent: straight through
	<-entered
	stopped := make(chan int)
	go func() {
		c.Stop()
		stopped <- count()
	}()
	close(proceed)
	if n := <-stopped; n != 2 {
		t.Fatalf("%d notifications out when Stop returned, want 2 (the first, and the one under way)", n)
	}
	clk.Advance(time.Hour) // the summary's timer, had it been left
	c.Notify(Notification{AgentID: "b", Title: "late"})
	c.Notify(Notification{Title: "late, no agent"})
	if n := count(); n != 2 {
		t.Fatalf("%d notifications out, want 2: something went out after Stop", n)
	}
}
