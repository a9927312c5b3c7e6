// Package eventbus fans the engine's pushed events out to any number of
// clients (the window, `GET /v1/events` streams, `shepherd events -f`)
// without ever making the engine wait: every client has a bounded buffer,
// and a client that falls behind by a whole buffer is dropped with a reason
// rather than slowing the engine or the others. Events get increasing ids;
// the last state events are kept so that a client that reconnects with the
// id it saw last gets what it missed.
//
// An event costs one encoding of its payload, whoever listens: the bytes
// are shared by every client and the replay ring, which is a fixed circle
// that never moves what it holds; a client whose filter leaves an event out
// costs a call of its filter.
package eventbus

import (
	"encoding/json"
	"strconv"
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

// Scoped is a payload that says which project it belongs to: the value of
// its JSON "projectId" ("" for the engine as a whole). A payload that is not
// Scoped has its projectId read from its encoding.
type Scoped interface {
	EventProjectID() string
}

// Replayed says which events are kept for clients that reconnect: the
// state of agents and projects (not log lines, not notifications).
var Replayed = map[string]bool{"agent:state": true, "agent:removed": true, "project:synced": true}

// Bus is an Emitter that delivers to subscribers.
type Bus struct {
	next   Emitter // also gets every event (the window in-process); may be nil
	buffer int

	mu     sync.Mutex
	seq    uint64
	ring   ring
	subs   []*Sub
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
	return &Bus{next: o.Next, buffer: o.Buffer, ring: ring{evs: make([]Event, o.Keep)}}
}

// ring holds the last len(evs) replayed events: a circle written in place,
// the oldest overwritten.
type ring struct {
	evs   []Event
	start int // the oldest
	n     int
}

func (r *ring) add(ev Event) {
	if r.n < len(r.evs) {
		r.evs[(r.start+r.n)%len(r.evs)] = ev
		r.n++
		return
	}
	r.evs[r.start] = ev
	r.start = (r.start + 1) % len(r.evs)
}

// at is the i-th kept event, oldest first.
func (r *ring) at(i int) *Event { return &r.evs[(r.start+i)%len(r.evs)] }

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
		subs := s.b.subs
		for i, o := range subs {
			if o == s {
				copy(subs[i:], subs[i+1:])
				subs[len(subs)-1] = nil
				s.b.subs = subs[:len(subs)-1]
				break
			}
		}
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
		r := &b.ring
		if r.n == 0 || r.at(0).ID > after+1 {
			s.c <- Event{Name: "reset", Data: json.RawMessage(`{"reason":"events were missed; fetch the state again"}`), Time: time.Now().UTC()}
		}
		for i := 0; i < r.n; i++ {
			if ev := r.at(i); ev.ID > after && (filter == nil || filter(*ev)) && len(s.c) < cap(s.c)-1 {
				s.c <- *ev
			}
		}
	}
	b.subs = append(b.subs, s)
	return s
}

// Emit delivers an event to every subscriber, never blocking.
func (b *Bus) Emit(event string, data any) {
	raw, err := json.Marshal(data)
	if err != nil {
		raw = append(append([]byte(`{"error":`), strconv.Quote(err.Error())...), '}')
	}
	project := ""
	if sc, ok := data.(Scoped); ok {
		project = sc.EventProjectID()
	} else {
		project = ProjectIDOf(raw)
	}
	b.mu.Lock()
	b.seq++
	ev := Event{ID: b.seq, Name: event, Data: raw, Time: time.Now().UTC(), ProjectID: project}
	if Replayed[event] {
		b.ring.add(ev)
	}
	for i := 0; i < len(b.subs); i++ {
		s := b.subs[i]
		if s.filter != nil && !s.filter(ev) {
			continue
		}
		select {
		case s.c <- ev:
		default:
			s.end("the client fell " + strconv.Itoa(cap(s.c)) + " events behind")
			i-- // s left the list: the next one is at i now
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
	for len(b.subs) > 0 {
		b.subs[len(b.subs)-1].end("the engine is closing")
	}
}
