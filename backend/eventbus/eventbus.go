// Package eventbus fans the engine's pushed events out to any number of
// clients (the window, `GET /v1/events` streams, `shepherd events -f`)
// without ever making the engine wait: every client has a bounded buffer,
// and a client that falls behind by a whole buffer is dropped with a reason
// rather than slowing the engine or the others. Events get increasing ids;
// the last state events are kept so that a client that reconnects with the
// id it saw last gets what it missed.
package eventbus

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// Event is one pushed event as clients receive it.
type Event struct {
	ID        uint64          `json:"id"`
	Name      string          `json:"event"`
	Data      json.RawMessage `json:"data"`
	Time      time.Time       `json:"time"`
	ProjectID string          `json:"-"` // the payload's projectId, for filters
}

// Emitter is what the engine pushes to (supervisor.Emitter).
type Emitter interface {
	Emit(event string, data any)
}

// Replayed says which events are kept for clients that reconnect: the
// state of agents and projects (not log lines, not notifications).
var Replayed = map[string]bool{"agent:state": true, "agent:removed": true, "project:synced": true}

// Bus is an Emitter that delivers to subscribers.
type Bus struct {
	next   Emitter // also gets every event (the window in-process); may be nil
	buffer int
	keep   int

	mu     sync.Mutex
	seq    uint64
	ring   []Event // the last keep replayed events, oldest first
	subs   map[*Sub]struct{}
	closed bool
}

// Options size a Bus.
type Options struct {
	Buffer int     // events a client may fall behind before it is dropped; 0: 512
	Keep   int     // replayed events kept for reconnects; 0: 2048
	Next   Emitter // gets every event too
}

// New returns a Bus.
func New(o Options) *Bus {
	if o.Buffer <= 0 {
		o.Buffer = 512
	}
	if o.Keep <= 0 {
		o.Keep = 2048
	}
	return &Bus{next: o.Next, buffer: o.Buffer, keep: o.Keep, subs: map[*Sub]struct{}{}}
}

// Sub is one client's subscription.
type Sub struct {
	b      *Bus
	c      chan Event
	filter func(Event) bool
	once   sync.Once
	done   chan struct{}
	reason string
}

// C delivers the events.
func (s *Sub) C() <-chan Event { return s.c }

// Done is closed when the subscription ends: Close, the bus closing, or the
// client falling behind.
func (s *Sub) Done() <-chan struct{} { return s.done }

// Reason says why the subscription ended ("" while it runs).
func (s *Sub) Reason() string {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.reason
}

// Close ends the subscription.
func (s *Sub) Close() {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.end("closed by the client")
}

// end ends s with reason. b.mu is held.
func (s *Sub) end(reason string) {
	s.once.Do(func() {
		s.reason = reason
		delete(s.b.subs, s)
		close(s.done)
	})
}

// Subscribe starts a subscription to the events filter accepts (nil: all).
// With after > 0 the replayed events after that id are delivered first; if
// some of them are no longer kept, a "reset" event comes first instead,
// telling the client to fetch the state again.
func (b *Bus) Subscribe(after uint64, filter func(Event) bool) *Sub {
	s := &Sub{b: b, c: make(chan Event, b.buffer), filter: filter, done: make(chan struct{})}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		s.end("the engine is closing")
		return s
	}
	if after > 0 && after < b.seq {
		if len(b.ring) == 0 || b.ring[0].ID > after+1 {
			s.c <- Event{Name: "reset", Data: json.RawMessage(`{"reason":"events were missed; fetch the state again"}`), Time: time.Now().UTC()}
		}
		for _, ev := range b.ring {
			if ev.ID > after && (filter == nil || filter(ev)) && len(s.c) < cap(s.c)-1 {
				s.c <- ev
			}
		}
	}
	b.subs[s] = struct{}{}
	return s
}

// Emit delivers an event to every subscriber, never blocking.
func (b *Bus) Emit(event string, data any) {
	raw, err := json.Marshal(data)
	if err != nil {
		raw = json.RawMessage(fmt.Sprintf(`{"error":%q}`, err.Error()))
	}
	var p struct {
		ProjectID string `json:"projectId"`
	}
	_ = json.Unmarshal(raw, &p)
	b.mu.Lock()
	b.seq++
	ev := Event{ID: b.seq, Name: event, Data: raw, Time: time.Now().UTC(), ProjectID: p.ProjectID}
	if Replayed[event] {
		b.ring = append(b.ring, ev)
		if len(b.ring) > b.keep {
			b.ring = append(b.ring[:0:0], b.ring[len(b.ring)-b.keep:]...)
		}
	}
	for s := range b.subs {
		if s.filter != nil && !s.filter(ev) {
			continue
		}
		select {
		case s.c <- ev:
		default:
			s.end(fmt.Sprintf("the client fell %d events behind", cap(s.c)))
		}
	}
	b.mu.Unlock()
	if b.next != nil {
		b.next.Emit(event, data)
	}
}

// Last is the id of the latest event (0: none yet).
func (b *Bus) Last() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seq
}

// Subscribers counts the subscriptions running.
func (b *Bus) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// Close ends every subscription.
func (b *Bus) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		s.end("the engine is closing")
	}
}
