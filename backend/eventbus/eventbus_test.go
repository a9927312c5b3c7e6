package eventbus

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

type rec struct{ names []string }

func (r *rec) Emit(event string, _ any) { r.names = append(r.names, event) }

func recv(t *testing.T, s *Sub) Event {
	t.Helper()
	select {
	case ev := <-s.C():
		return ev
	case <-time.After(2 * time.Second):
		t.Fatal("no event")
	}
	return Event{}
}

func TestDeliveryOrderAndNext(t *testing.T) {
	next := &rec{}
	b := New(Options{Next: next})
	s := b.Subscribe(0, nil)
	b.Emit("agent:state", map[string]any{"projectId": "p", "id": "a"})
	b.Emit("notify", map[string]string{"title": "x"})
	e1, e2 := recv(t, s), recv(t, s)
	if e1.ID != 1 || e1.Name != "agent:state" || e1.ProjectID != "p" || e2.ID != 2 || e2.Name != "notify" {
		t.Fatalf("%+v %+v", e1, e2)
	}
	var d map[string]string
	if json.Unmarshal(e1.Data, &d) != nil || d["id"] != "a" {
		t.Fatalf("data %s", e1.Data)
	}
	if strings.Join(next.names, ",") != "agent:state,notify" {
		t.Fatalf("next got %v", next.names)
	}
}

// A client that stops reading is dropped with a reason once it is a whole
// buffer behind; the engine never waits, and another client gets everything.
func TestSlowClientDropped(t *testing.T) {
	b := New(Options{Buffer: 4})
	slow := b.Subscribe(0, nil)
	fast := b.Subscribe(0, nil)
	got := make(chan int)
	go func() {
		n := 0
		for range fast.C() {
			n++
			if n == 100 {
				got <- n
				return
			}
		}
	}()
	done := make(chan struct{})
	go func() {
		for i := 0; i < 100; i++ {
			b.Emit("agent:state", i)
			for len(fast.C()) == cap(fast.C()) { // pace the emitter to the fast reader, not the slow one
				time.Sleep(time.Microsecond)
			}
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Emit blocked on a stalled client")
	}
	if n := <-got; n != 100 {
		t.Fatalf("fast client got %d", n)
	}
	select {
	case <-slow.Done():
	default:
		t.Fatal("stalled client not dropped")
	}
	if !strings.Contains(slow.Reason(), "fell 4 events behind") {
		t.Fatalf("reason %q", slow.Reason())
	}
	if b.Subscribers() != 1 {
		t.Fatalf("%d subscribers", b.Subscribers())
	}
}

// A client that reconnects with the last id it saw gets the state events it
// missed (not notifications); one that missed more than is kept is told to
// fetch the state again.
func TestReplay(t *testing.T) {
	b := New(Options{Keep: 3})
	b.Emit("agent:state", 1)
	b.Emit("notify", 2)
	b.Emit("agent:state", 3)
	s := b.Subscribe(1, nil)
	if ev := recv(t, s); ev.ID != 3 {
		t.Fatalf("replayed %+v", ev)
	}
	for i := 0; i < 5; i++ {
		b.Emit("agent:removed", i)
	}
	s2 := b.Subscribe(1, nil)
	if ev := recv(t, s2); ev.Name != "reset" {
		t.Fatalf("want reset, got %+v", ev)
	}
	if ev := recv(t, s2); ev.ID != 6 {
		t.Fatalf("after reset %+v", ev)
	}
}

func TestFilterAndClose(t *testing.T) {
	b := New(Options{})
	s := b.Subscribe(0, func(ev Event) bool { return ev.ProjectID == "p" })
	b.Emit("agent:state", map[string]string{"projectId": "q"})
	b.Emit("agent:state", map[string]string{"projectId": "p"})
	if ev := recv(t, s); ev.ProjectID != "p" {
		t.Fatalf("%+v", ev)
	}
	b.Close()
	<-s.Done()
	if s.Reason() != "the engine is closing" {
		t.Fatalf("reason %q", s.Reason())
	}
	late := b.Subscribe(0, nil)
	<-late.Done()
}
