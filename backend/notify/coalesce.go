package notify

import (
	"fmt"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// Coalescer keeps a storm calm (SPEC "Attention"): at most one notification
// per agent per window. What comes within the window after one was sent is
// held, and at the window's end one notification says how many there were
// ("ka failed 5 times in 1 min") with the latest one's words. Notifications
// that name no agent pass straight through.
type Coalescer struct {
	clock  clockwork.Clock
	window time.Duration
	out    func(Notification)

	mu      sync.Mutex
	slots   map[string]*slot
	stopped bool           // Stop was called: nothing more goes out
	sending sync.WaitGroup // sends under way, which Stop waits for
}

type slot struct {
	last  time.Time // when the latest notification went out
	held  []Notification
	timer clockwork.Timer
}

// NewCoalescer sends through out, one per agent per window.
func NewCoalescer(clock clockwork.Clock, window time.Duration, out func(Notification)) *Coalescer {
	return &Coalescer{clock: clock, window: window, out: out, slots: map[string]*slot{}}
}

// Notify sends n now, or holds it for the summary at the end of its agent's
// window.
func (c *Coalescer) Notify(n Notification) {
	if n.AgentID == "" || c.window < 0 {
		c.send(n)
		return
	}
	key := n.ProjectID + "/" + n.AgentID
	now := c.clock.Now()
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return
	}
	s := c.slots[key]
	if s == nil {
		s = &slot{}
		c.slots[key] = s
	}
	if len(s.held) == 0 && (s.last.IsZero() || now.Sub(s.last) >= c.window) {
		s.last = now
		c.sending.Add(1)
		c.mu.Unlock()
		defer c.sending.Done()
		c.out(n)
		return
	}
	s.held = append(s.held, n)
	if s.timer == nil {
		s.timer = c.clock.AfterFunc(s.last.Add(c.window).Sub(now), func() { c.flush(key) })
	}
	c.mu.Unlock()
}

// flush sends the summary of what an agent's window held.
func (c *Coalescer) flush(key string) {
	c.mu.Lock()
	s := c.slots[key]
	if c.stopped || s == nil || len(s.held) == 0 {
		if s != nil {
			s.timer = nil
		}
		c.mu.Unlock()
		return
	}
	held := s.held
	s.held, s.timer, s.last = nil, nil, c.clock.Now()
	c.sending.Add(1)
	c.mu.Unlock()
	defer c.sending.Done()
	c.out(Summary(held, c.window))
}

// send sends n now, unless stopped.
func (c *Coalescer) send(n Notification) {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return
	}
	c.sending.Add(1)
	c.mu.Unlock()
	defer c.sending.Done()
	c.out(n)
}

// Summary is one notification for several of one agent's: the worst level,
// a count in the title, the latest one's message.
func Summary(held []Notification, window time.Duration) Notification {
	last := held[len(held)-1]
	if len(held) == 1 {
		return last
	}
	n := last
	for _, h := range held {
		if rank(h.Level) > rank(n.Level) {
			n.Level = h.Level
		}
		n.Native = n.Native || h.Native
	}
	same := true
	for _, h := range held {
		same = same && h.Kind == last.Kind
	}
	span := window.Round(time.Second).String()
	if window%time.Minute == 0 {
		span = fmt.Sprintf("%d min", int(window.Minutes()))
	}
	if same && last.Kind == KindFailed {
		n.Title = fmt.Sprintf("%s failed %d more times in %s", last.AgentID, len(held), span)
	} else {
		n.Title = fmt.Sprintf("%s: %d more notices in %s", last.AgentID, len(held), span)
	}
	n.Message = "Latest: " + last.Title + " — " + last.Message
	n.MessageJA = ""
	return n
}

func rank(level string) int {
	switch level {
	case Error:
		return 3
	case Warning:
		return 2
	case Success:
		return 1
	}
	return 0
}

// Stop drops what is held and stops the timers (the engine is closing): it
// returns once a send under way has ended, and nothing goes out after —
// neither a summary whose timer fired meanwhile nor a notification given
// later.
func (c *Coalescer) Stop() {
	c.mu.Lock()
	c.stopped = true
	for _, s := range c.slots {
		if s.timer != nil {
			s.timer.Stop()
		}
		s.held, s.timer = nil, nil
	}
	c.mu.Unlock()
	c.sending.Wait()
}
