package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"shepherd/backend/api"
	"shepherd/backend/logfollow"
	"shepherd/backend/notify"
	"shepherd/backend/shim"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
	"shepherd/internal/testutil"
)

// shim builds the agent shim once, unless SHEPHERD_SHIM names one.
var shimOnce struct {
	sync.Once
	path string
	err  error
}

func needShim(t *testing.T) {
	t.Helper()
	if p := os.Getenv("SHEPHERD_SHIM"); p != "" {
		return
	}
	shimOnce.Do(func() {
		dir, err := os.MkdirTemp("", "shepherd-app-shim")
		if err != nil {
			shimOnce.err = err
			return
		}
		shimOnce.path = filepath.Join(dir, "shepherd-shim")
		out, err := shim.BuildCommand(shimOnce.path).CombinedOutput()
		if err != nil {
			shimOnce.err = err
			t.Log(string(out))
		}
	})
	if shimOnce.err != nil {
		t.Fatalf("build shim: %v", shimOnce.err)
	}
	t.Setenv("SHEPHERD_SHIM", shimOnce.path)
}

type emitted struct {
	mu     sync.Mutex
	events []struct {
		name string
		data any
	}
}

func (r *emitted) emit(_ context.Context, name string, data any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, struct {
		name string
		data any
	}{name, data})
}

func (r *emitted) logLines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if b, ok := e.data.(logfollow.Batch); ok && e.name == EventAgentLog {
			out = append(out, b.Lines...)
		}
	}
	return out
}

func (r *emitted) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if e.name == name {
			n++
		}
	}
	return n
}

func startApp(t *testing.T) (*App, *emitted) {
	t.Helper()
	isolate(t)
	needShim(t)
	a := New("test")
	rec := &emitted{}
	a.emitFn = rec.emit
	OnStartup(a)(context.Background())
	t.Cleanup(func() { OnShutdown(a)(context.Background()) })
	if _, err := a.Engine(); err != nil {
		t.Fatal(err)
	}
	return a, rec
}

// call is what the frontend does: an operation by its id, its parameters by
// name and its body (as the frontend sends it: JSON text, "" for none); out
// gets the answer.
func call(a *App, id string, params map[string]any, body, out any) error {
	b := ""
	if body != nil {
		j, err := json.Marshal(body)
		if err != nil {
			return err
		}
		b = string(j)
	}
	got, err := a.Call(id, params, b)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	j, err := json.Marshal(got)
	if err != nil {
		return err
	}
	return json.Unmarshal(j, out)
}

func addProject(t *testing.T, a *App, dir, name string) store.Project {
	t.Helper()
	var p store.Project
	if err := call(a, "addProject", nil, map[string]string{"path": dir, "name": name}, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func agentParams(p, id string) map[string]any { return map[string]any{"project": p, "agent": id} }

// The window's one call drives the embedded engine through its API: add a
// project, create and start an agent, follow its log as pushed batches,
// stop it, remove it; a refusal comes back as the API's error.
func TestCallDrivesTheEngine(t *testing.T) {
	a, rec := startApp(t)
	dir := t.TempDir()
	p := addProject(t, a, dir, "demo")
	if p.Name != "demo" {
		t.Fatalf("Add = %+v", p)
	}
	if err := call(a, "selectProject", map[string]any{"project": p.ID}, nil, nil); err != nil {
		t.Fatal(err)
	}
	err := call(a, "createAgent", map[string]any{"project": p.ID}, supervisor.AgentSpec{ID: "bad", Command: " "}, nil)
	var ce *CallError
	if !errors.As(err, &ce) || ce.Status != 400 || ce.Name != "ValidationError" || !strings.Contains(ce.Message, "command is empty") {
		t.Fatalf("create with no command: %v", err)
	}
	var fromJS map[string]any // what the frontend parses out of the rejection
	if json.Unmarshal([]byte(err.Error()), &fromJS) != nil || fromJS["error"] != "ValidationError" {
		t.Fatalf("the rejection's text is not the error's JSON: %q", err)
	}
	spec := supervisor.AgentSpec{ID: "talker", Command: "sh",
		Args: []string{"-c", "echo first; sleep 0.3; echo second; exec sleep 30"}, GraceSec: 1,
		Env: map[string]string{"API_TOKEN": "s3cret"}}
	if err := call(a, "createAgent", map[string]any{"project": p.ID}, spec, nil); err != nil {
		t.Fatal(err)
	}
	chunk, err := a.Logs.Tail(p.ID, "talker", 10)
	if err != nil || len(chunk.Lines) != 0 {
		t.Fatalf("Tail before start = %+v, %v", chunk, err)
	}
	if err := a.Logs.Follow(p.ID, "talker", chunk.Offset); err != nil {
		t.Fatal(err)
	}
	var r store.Record
	if err := call(a, "startAgent", agentParams(p.ID, "talker"), nil, &r); err != nil || r.Status != "running" {
		t.Fatalf("Start = %+v, %v", r, err)
	}
	if r.Env["API_TOKEN"] != "s3cret" {
		t.Fatalf("the window gets secret values as they are (it masks them itself): %v", r.Env)
	}
	testutil.Eventually(t, "both log lines pushed", func() bool {
		l := rec.logLines()
		return len(l) == 2 && l[0] == "first" && l[1] == "second"
	})
	var list []supervisor.ProjectView
	if err := call(a, "listProjects", nil, nil, &list); err != nil || len(list) != 1 || list[0].Running != 1 || !list[0].Loaded {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if err := call(a, "stopAgent", agentParams(p.ID, "talker"), api.StopInput{GraceSec: store.Ptr(1)}, &r); err != nil || r.Status != "stopped" {
		t.Fatalf("Stop = %+v, %v", r, err)
	}
	if rec.count("agent:state") < 3 {
		t.Fatalf("agent:state pushed %d times", rec.count("agent:state"))
	}
	var evs []store.Event // NDJSON, as an array
	if err := call(a, "listEvents", map[string]any{"project": p.ID, "agent": "talker", "limit": float64(100)}, nil, &evs); err != nil ||
		len(evs) < 3 || evs[0].Event != "created" {
		t.Fatalf("Events = %+v, %v", evs, err)
	}
	a.Logs.Unfollow(p.ID, "talker")
	remove := agentParams(p.ID, "talker")
	remove["deleteLog"] = true
	if err := call(a, "removeAgent", remove, nil, nil); err != nil {
		t.Fatal(err)
	}
	var l []store.Record
	if err := call(a, "listAgents", map[string]any{"project": p.ID}, nil, &l); err != nil || len(l) != 0 {
		t.Fatalf("agents after remove: %d, %v", len(l), err)
	}
	if err := call(a, "listAgents", map[string]any{"project": p.ID, "colour": "red"}, nil, nil); err == nil ||
		!strings.Contains(err.Error(), `no parameter \"colour\"`) {
		t.Fatalf("an unknown parameter: %v", err)
	}
	if err := call(a, "noSuchOperation", nil, nil, nil); err == nil {
		t.Fatal("an unknown operation was called")
	}
}

func TestCallWithoutEngine(t *testing.T) {
	a := New("test")
	err := call(a, "listProjects", nil, nil, nil)
	var ce *CallError
	if !errors.As(err, &ce) || ce.Name != "EngineUnavailable" || ce.Message != "the engine is not running" {
		t.Fatalf("listProjects without an engine: %v", err)
	}
	if err := call(a, "startAgent", agentParams("p", "a"), nil, nil); err == nil {
		t.Fatal("startAgent without an engine succeeded")
	}
}

// Without a session bus beeep is never called (it would start a stray
// dbus-daemon), and the reason is logged once.
func TestNativeNotifierNeedsASessionBus(t *testing.T) {
	calls := 0
	n := &nativeNotifier{
		send:   func(string, string) error { calls++; return nil },
		getenv: func(string) string { return "" },
		log:    nopLogger,
	}
	n.Notify(notify.Notification{Title: "x", Message: "y"})
	n.Notify(notify.Notification{Title: "x", Message: "y"})
	if calls != 0 {
		t.Fatalf("beeep called %d times without a session bus", calls)
	}
	n.getenv = func(string) string { return "unix:path=/run/user/1/bus" }
	n.Notify(notify.Notification{Title: "Agent failed", Message: "boom"})
	if calls != 1 {
		t.Fatalf("beeep called %d times with a session bus", calls)
	}
}

// A failure in the engine reaches the window as a toast event and, as the
// project's settings want, the desktop; with native notifications off, only
// the window.
func TestNotificationsReachTheDesktop(t *testing.T) {
	a, rec := startApp(t)
	got := make(chan notify.Notification, 8)
	a.native = notify.Func(func(n notify.Notification) { got <- n })
	p := addProject(t, a, t.TempDir(), "n")
	fail := func(id string) {
		if err := call(a, "createAgent", map[string]any{"project": p.ID}, supervisor.AgentSpec{ID: id, Command: "/bin/sh", Args: []string{"-c", "exit 3"}}, nil); err != nil {
			t.Fatal(err)
		}
		if err := call(a, "startAgent", agentParams(p.ID, id), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	fail("a")
	select {
	case n := <-got:
		if n.Kind != notify.KindFailed || n.AgentID != "a" {
			t.Fatalf("native notification: %+v", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no native notification of the failure")
	}
	if err := call(a, "putSettings", map[string]any{"project": p.ID}, map[string]any{"notifyNative": false}, nil); err != nil {
		t.Fatal(err)
	}
	fail("b")
	testutil.Eventually(t, "toast of b", func() bool { return rec.count(supervisor.EventNotify) == 2 })
	select {
	case n := <-got:
		t.Fatalf("shown on the desktop although the settings say no: %+v", n)
	case <-time.After(200 * time.Millisecond):
	}
}

func nopLogger() zerolog.Logger { return zerolog.Nop() }

// With "stop agents when Shepherd quits" on, closing the app stops them;
// by default they keep running.
func TestStopAgentsOnQuit(t *testing.T) {
	for _, stop := range []bool{false, true} {
		t.Run(fmt.Sprint("stop=", stop), func(t *testing.T) {
			a, _ := startApp(t)
			t.Setenv("XDG_CONFIG_HOME", t.TempDir())
			if _, err := a.Settings.PutPrefs(Prefs{StopAgentsOnQuit: stop}); err != nil {
				t.Fatal(err)
			}
			if got, _ := a.Settings.GetPrefs(); got.StopAgentsOnQuit != stop {
				t.Fatalf("GetPrefs = %+v", got)
			}
			p := addProject(t, a, t.TempDir(), "")
			if err := call(a, "createAgent", map[string]any{"project": p.ID}, supervisor.AgentSpec{ID: "sleeper", Command: "sleep", Args: []string{"30"}, GraceSec: 1}, nil); err != nil {
				t.Fatal(err)
			}
			var r store.Record
			if err := call(a, "startAgent", agentParams(p.ID, "sleeper"), nil, &r); err != nil {
				t.Fatal(err)
			}
			pid, shim := r.PID, r.ShimPID
			t.Cleanup(func() {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				// The shim writes exit.json after the kill: let it finish
				// before the folders are removed.
				testutil.WaitGone(shim)
			})
			OnShutdown(a)(context.Background())
			alive := syscall.Kill(pid, 0) == nil
			if alive == stop {
				t.Fatalf("agent alive=%v after quit with stopAgentsOnQuit=%v", alive, stop)
			}
		})
	}
}

// The agent form asks the engine where a command is (lookupCommand): a
// command on its PATH, a relative path from the given folder, and a missing
// one as the engine's ValidationError.
func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "tool")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	a, _ := startApp(t)
	var got struct{ Path string }
	if err := call(a, "lookupCommand", map[string]any{"command": "sh"}, nil, &got); err != nil || got.Path == "" {
		t.Fatalf("lookupCommand(sh) = %q, %v", got.Path, err)
	}
	if err := call(a, "lookupCommand", map[string]any{"command": "./tool", "cwd": dir}, nil, &got); err != nil || got.Path != exe {
		t.Fatalf("lookupCommand(./tool) = %q, %v; want %q", got.Path, err, exe)
	}
	err := call(a, "lookupCommand", map[string]any{"command": "no-such-command-shepherd", "cwd": dir}, nil, nil)
	var ce *CallError
	if !errors.As(err, &ce) || ce.Name != "ValidationError" || ce.Status != 400 {
		t.Fatalf("lookupCommand of a missing command: %v", err)
	}
}

// The project list carries what its agents' runs cost (the window's header
// reads today's cost from it).
func TestProjectListCarriesCost(t *testing.T) {
	a, _ := startApp(t)
	p := addProject(t, a, t.TempDir(), "costly")
	line := `{"type":"result","subtype":"success","is_error":false,"duration_ms":900,"num_turns":2,` +
		`"total_cost_usd":0.25,"session_id":"3f2a9c4e-8b1d-4e6f-a2c7-5d9e0f1b3a71","result":"done",` +
		`"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":7}}`
	spec := supervisor.AgentSpec{ID: "paid", Command: "sh", Profile: "claude-stream-json",
		Args: []string{"-c", "echo '" + line + "'"}, GraceSec: 1}
	if err := call(a, "createAgent", map[string]any{"project": p.ID}, spec, nil); err != nil {
		t.Fatal(err)
	}
	if err := call(a, "startAgent", agentParams(p.ID, "paid"), nil, nil); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the run's cost in the project list", func() bool {
		var list []supervisor.ProjectView
		err := call(a, "listProjects", nil, nil, &list)
		return err == nil && len(list) == 1 && list[0].Totals != nil && list[0].Totals.CostUSD != nil &&
			*list[0].Totals.CostUSD == 0.25 && list[0].CostToday == 0.25
	})
}

// The project's Needs you count is the engine's attention: a failure counts
// until it is acknowledged.
func TestProjectListCountsAttention(t *testing.T) {
	a, _ := startApp(t)
	p := addProject(t, a, t.TempDir(), "demo")
	if err := call(a, "selectProject", map[string]any{"project": p.ID}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := call(a, "createAgent", map[string]any{"project": p.ID}, supervisor.AgentSpec{ID: "bad", Command: "sh", Args: []string{"-c", "exit 3"}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := call(a, "startAgent", agentParams(p.ID, "bad"), nil, nil); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		var list []supervisor.ProjectView
		err := call(a, "listProjects", nil, nil, &list)
		if err != nil || len(list) != 1 {
			t.Fatalf("List = %+v, %v", list, err)
		}
		return list[0].Attention
	}
	testutil.Eventually(t, "the failure counted", func() bool { return count() == 1 })
	if err := call(a, "ackAgent", agentParams(p.ID, "bad"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Fatalf("after ack: %d in Needs you", n)
	}
}
