package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"shepherd/backend/api"
	"shepherd/backend/procid"
	"shepherd/backend/store"
	"shepherd/internal/testutil"
)

// The engine's events reach a client of GET /v1/events as they happen, with
// the same names and payloads the window gets; `shepherd events -f` prints
// them.
func TestEventStream(t *testing.T) {
	p := isolate(t)
	serve(t, p)
	dir := t.TempDir()
	var proj store.Project
	okJSON(t, &proj, "add-project", dir)
	ok(t, "create", proj.ID, "a", "--", "/bin/sh", "-c", "echo hi; sleep 300")

	info, _ := api.ReadEngineInfo(p.EngineFile())
	c := api.NewClient(info)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type got struct {
		ev api.StreamEvent
		at time.Time
	}
	evs := make(chan got, 100)
	go c.Stream(ctx, api.StreamIn{Project: proj.ID}, func(ev api.StreamEvent) error {
		evs <- got{ev, time.Now()}
		return nil
	})
	if g := <-evs; g.ev.Name != "hello" {
		t.Fatalf("first event %+v", g.ev)
	}

	// shepherd events -f, in the background.
	var out syncBuf
	fctx, fcancel := context.WithCancel(context.Background())
	fdone := make(chan int)
	go func() { fdone <- Main(fctx, []string{"events", "-f", proj.ID}, &out, &out) }()
	testutil.Eventually(t, "events -f connected", func() bool { return strings.Contains(out.String(), "Following the engine's events") })

	ok(t, "start", proj.ID, "a")
	started := time.Now() // the running state is pushed before the start answers
	deadline := time.After(5 * time.Second)
	var lastID uint64
	for running := false; !running; {
		select {
		case g := <-evs:
			if g.ev.Name != "agent:state" {
				continue
			}
			lastID = g.ev.ID
			var r store.Record
			if err := json.Unmarshal(g.ev.Data, &r); err != nil {
				t.Fatal(err)
			}
			if r.Status == "running" {
				running = true
				if d := g.at.Sub(started); d > 100*time.Millisecond {
					t.Fatalf("agent:state running reached the stream client %s after the start answered", d)
				}
			}
		case <-deadline:
			t.Fatal("no agent:state running over the stream")
		}
	}
	testutil.Eventually(t, "events -f printed the start", func() bool {
		return strings.Contains(out.String(), "agent:state") && strings.Contains(out.String(), "/a  running")
	})
	fcancel()
	if code := <-fdone; code != 0 {
		t.Fatalf("events -f ended with %d:\n%s", code, out.String())
	}

	// A client that reconnects from the id it saw last gets what it missed.
	ok(t, "stop", proj.ID, "a", "--grace", "1")
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer rcancel()
	var replayed []string
	c.Stream(rctx, api.StreamIn{Project: proj.ID, LastEventID: strconv.FormatUint(lastID, 10)}, func(ev api.StreamEvent) error {
		if ev.Name == "agent:state" {
			var r store.Record
			json.Unmarshal(ev.Data, &r)
			replayed = append(replayed, string(r.Status))
			if r.Status == "stopped" {
				rcancel()
			}
		}
		return nil
	})
	// The run's own state may have been pushed again after the one seen
	// (its activity changed: the first look at its log); what the client
	// missed of the stop is what must come back.
	for len(replayed) > 0 && replayed[0] == "running" {
		replayed = replayed[1:]
	}
	if strings.Join(replayed, ",") != "stopping,stopped" {
		t.Fatalf("replayed after %d: %v", lastID, replayed)
	}

	// Bad input: 400 with the parameter named, 404 for an unknown agent.
	_, err := c.Do(context.Background(), "GET", "/v1/events?follow=nope", nil)
	if ae, okk := err.(*api.Error); !okk || ae.Status != 400 || !strings.Contains(ae.Message, "follow=") {
		t.Fatalf("bad follow: %v", err)
	}
	_, err = c.Do(context.Background(), "GET", "/v1/events?follow="+proj.ID+"/zz", nil)
	if ae, okk := err.(*api.Error); !okk || ae.Status != 404 {
		t.Fatalf("unknown agent: %v", err)
	}
}

// `shepherd quit` ends the engine; with the stop-on-quit preference off,
// every agent keeps running; with it on, they are stopped.
func TestQuit(t *testing.T) {
	for _, stop := range []bool{false, true} {
		p := isolate(t)
		if stop {
			cfg := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "shepherd")
			os.MkdirAll(cfg, 0o700)
			os.WriteFile(filepath.Join(cfg, "prefs.json"), []byte(`{"stopAgentsOnQuit":true}`), 0o600)
		}
		srv := serve(t, p)
		var proj store.Project
		okJSON(t, &proj, "add-project", t.TempDir())
		ok(t, "create", proj.ID, "a", "--", "/bin/sh", "-c", "exec sleep 300")
		var r store.Record
		okJSON(t, &r, "start", proj.ID, "a")
		if out := ok(t, "quit"); !strings.Contains(out, "has quit") {
			t.Fatalf("quit: %q", out)
		}
		select {
		case code := <-srv.done:
			srv.ended, srv.code = true, code
			if code != 0 {
				t.Fatalf("serve ended with %d", code)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("serve still running after quit")
		}
		alive := procid.Compare(r.PID, r.ProcessStartTime) == procid.Same
		if alive == stop {
			t.Fatalf("stop-on-quit %v: agent alive after quit = %v", stop, alive)
		}
		fails(t, 1, "no engine running", "quit")
	}
}
