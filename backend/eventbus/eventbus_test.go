package eventbus

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"shepherd/backend/store"
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

// The ring keeps exactly the last Keep replayed events, in order, however
// many went past it; a reconnect within them gets the rest, one before
// them is told to reset.
func TestRingKeepsTheLast(t *testing.T) {
	b := New(Options{Keep: 3, Buffer: 16})
	for i := 1; i <= 10; i++ {
		b.Emit("agent:state", i)
		if i%4 == 0 {
			b.Emit("notify", i) // not kept
		}
	}
	// ids: 1..4 state, 5 notify, 6..9 state (6,7,8,9), 10 notify, 11,12 state.
	s := b.Subscribe(9, nil)
	var got []uint64
	for len(s.C()) > 0 {
		got = append(got, (<-s.C()).ID)
	}
	if fmt.Sprint(got) != "[11 12]" {
		t.Fatalf("after 9: %v", got)
	}
	s2 := b.Subscribe(8, nil)
	got = nil
	for len(s2.C()) > 0 {
		got = append(got, (<-s2.C()).ID)
	}
	if fmt.Sprint(got) != "[9 11 12]" {
		t.Fatalf("after 8: %v", got)
	}
	s3 := b.Subscribe(7, nil)
	if ev := recv(t, s3); ev.Name != "reset" {
		t.Fatalf("after 7 (8 no longer kept): %+v", ev)
	}
	got = nil
	for len(s3.C()) > 0 {
		got = append(got, (<-s3.C()).ID)
	}
	if fmt.Sprint(got) != "[9 11 12]" {
		t.Fatalf("after 7, past the reset: %v", got)
	}
}

// Several clients that fell behind are all dropped by one event, and the
// one that keeps up still gets it.
func TestManySlowClientsDroppedAtOnce(t *testing.T) {
	b := New(Options{Buffer: 1})
	var slow []*Sub
	for range 5 {
		slow = append(slow, b.Subscribe(0, nil))
	}
	fast := b.Subscribe(0, nil)
	b.Emit("agent:state", 1)
	if ev := recv(t, fast); ev.ID != 1 {
		t.Fatalf("%+v", ev)
	}
	b.Emit("agent:state", 2) // every slow one is a whole buffer behind now
	if ev := recv(t, fast); ev.ID != 2 {
		t.Fatalf("%+v", ev)
	}
	for i, s := range slow {
		select {
		case <-s.Done():
		default:
			t.Fatalf("slow client %d not dropped", i)
		}
	}
	if n := b.Subscribers(); n != 1 {
		t.Fatalf("%d subscribers", n)
	}
}

type scoped struct {
	Name  string `json:"name"`
	asked *int
}

func (s scoped) EventProjectID() string { *s.asked++; return "p" }

// A Scoped payload names its project itself; any other has it read from
// its JSON (a Record is Scoped).
func TestProjectOfPayload(t *testing.T) {
	b := New(Options{})
	s := b.Subscribe(0, func(ev Event) bool { return ev.ProjectID == "p" })
	all := b.Subscribe(0, func(ev Event) bool { return ev.ProjectID == "" })
	asked := 0
	b.Emit("agent:state", scoped{Name: "x", asked: &asked})
	if ev := recv(t, s); ev.ProjectID != "p" || asked != 1 {
		t.Fatalf("%+v, asked %d", ev, asked)
	}
	b.Emit("agent:state", &store.Record{ID: "a", ProjectID: "p"})
	if ev := recv(t, s); ev.ProjectID != "p" || ProjectIDOf(ev.Data) != "p" {
		t.Fatalf("%+v", ev)
	}
	b.Emit("agent:removed", struct {
		ProjectID string `json:"projectId"`
	}{"p"})
	if ev := recv(t, s); ev.ProjectID != "p" {
		t.Fatalf("%+v", ev)
	}
	var nilRec *store.Record
	b.Emit("agent:state", nilRec)
	b.Emit("engine:alerts", []string{"x"})
	if ev := recv(t, all); ev.Name != "agent:state" || ev.ProjectID != "" || string(ev.Data) != "null" {
		t.Fatalf("%+v", ev)
	}
	if ev := recv(t, all); ev.Name != "engine:alerts" || ev.ProjectID != "" {
		t.Fatalf("%+v", ev)
	}
	if len(s.C()) != 0 {
		t.Fatalf("the project's client got %+v", <-s.C())
	}
}

func TestProjectIDOf(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"projectId":"p"}`, "p"},
		{` { "a" : [1,{"projectId":"no"}], "projectId" : "p" , "b":{"c":"}"}} `, "p"},
		{`{"ProjectID":"p"}`, "p"},
		{`{"projectId":"p","projectid":"q"}`, "q"},
		{`{"projectId":"p","projectId":3}`, "p"},
		{`{"projectId":null}`, ""},
		{`{"project\u0049d":"e"}`, "e"},
		{`{"projectId":"a\"b"}`, `a"b`},
		{`["projectId","p"]`, ""},
		{`"projectId"`, ""},
		{`{"x":"projectId","y":"p"}`, ""},
	} {
		if got := ProjectIDOf([]byte(c.in)); got != c.want {
			t.Errorf("%s: %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzProjectIDOf: for any JSON value the bus may be given, the project id
// read in place is what encoding/json reads.
func FuzzProjectIDOf(f *testing.F) {
	for _, s := range []string{`{"projectId":"p"}`, `{"a":{"projectId":"x"},"projectId":"p"}`, `{"PROJECTID":"p","projectId":1}`,
		`{"projectId":"\u00e9"}`, "{\"projectId\":\"\xff\"}", `[{"projectId":"p"}]`, `{"a":"\\","projectId":"p"}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := ProjectIDOf(b) // never panics, whatever b is
		if !json.Valid(b) {
			return
		}
		if want := slowProjectID(b); got != want {
			t.Fatalf("%q: %q, encoding/json reads %q", b, got, want)
		}
	})
}

// BenchmarkEmit: one agent:state of a typical record, with the replay ring
// full, to no client, and to 10 clients of other projects (filtered out).
func BenchmarkEmit(b *testing.B) {
	now := time.Now()
	rec := &store.Record{ID: "agent-1", ProjectID: "proj-0123456789", Command: "claude", Args: []string{"-p", "fix the tests", "--output-format", "stream-json"},
		Cwd: "/home/user/src/project", Profile: store.ProfileClaudeJSON, Status: "running", Desired: "running", PID: 12345, ProcessStartTime: 1700000000000,
		ShimPID: 12344, ShimStartTime: 1700000000000, StartedAt: &now, LastActivityAt: &now, GraceSec: 10,
		Activity: &store.Activity{State: store.ActivityWorking}}
	for _, clients := range []int{0, 10} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			bus := New(Options{}) // the engine's ring: 2048 kept
			for range clients {
				s := bus.Subscribe(0, func(ev Event) bool { return ev.ProjectID == "other" || ev.ProjectID == "" })
				defer s.Close()
			}
			for range 2100 {
				bus.Emit("agent:state", rec) // past the ring's limit
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				bus.Emit("agent:state", rec)
			}
		})
	}
}
