package api_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"shepherd/backend/api"
	"shepherd/backend/eventbus"
)

// A client that stops reading its event stream is dropped without
// delaying the engine or another client, which gets every event.
func TestStalledStreamClientIsDropped(t *testing.T) {
	f := newFake(t.TempDir())
	bus := eventbus.New(eventbus.Options{Buffer: 8})
	srv := httptest.NewServer(api.New(f, token, api.Options{Version: "test", Bus: bus, Heartbeat: time.Hour}))
	defer srv.Close()
	defer bus.Close()

	// The stalled client: asks for the stream and never reads an answer.
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", token)

	c := api.NewClient(api.EngineInfo{URL: srv.URL, Token: token})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan int, 1)
	hello := make(chan struct{})
	read := make(chan struct{}, 1000) // one per event the reading client got
	const n = 300
	go c.Stream(ctx, api.StreamIn{}, func(ev api.StreamEvent) error {
		if ev.Name == "hello" {
			close(hello)
			return nil
		}
		if ev.Name == "agent:state" {
			read <- struct{}{}
		}
		if ev.Name == "agent:state" && strings.Contains(string(ev.Data), fmt.Sprintf(`"n":%d,`, n-1)) {
			got <- n
		}
		return nil
	})
	<-hello
	for bus.Subscribers() < 2 {
		time.Sleep(time.Millisecond)
	}
	pad := strings.Repeat("x", 64<<10) // big events fill the stalled socket fast
	emitted := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		for i := 0; i < n; i++ {
			bus.Emit("agent:state", map[string]any{"n": i, "pad": pad})
			// Keep pace with the reading client (never more than one event
			// ahead of it), whatever the machine's speed: only the stalled
			// one falls behind.
			select {
			case <-read:
			case <-time.After(10 * time.Second):
				return
			}
		}
		emitted <- time.Since(start)
	}()
	select {
	case <-emitted: // every event emitted while a client reads none: the engine never waits for one
	case <-time.After(10 * time.Second):
		t.Fatal("Emit blocked")
	}
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the reading client did not get every event")
	}
	deadline := time.Now().Add(5 * time.Second)
	for bus.Subscribers() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the stalled client was not dropped: %d subscribers", bus.Subscribers())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Its stream ends with a line that says why (once it reads again).
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if sc.Text() == "event: dropped" {
			return
		}
	}
	t.Fatalf("no dropped event at the end of the stalled stream: %v", sc.Err())
}
