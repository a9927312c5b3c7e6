package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"shepherd/backend/logfollow"
	"shepherd/backend/notify"
	"shepherd/backend/shim"
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

// The bound services drive the embedded engine: add a project, create and
// start an agent, follow its log as pushed batches, stop it, remove it.
func TestServicesDriveTheEngine(t *testing.T) {
	a, rec := startApp(t)
	dir := t.TempDir()
	p, err := a.Projects.Add(dir, "demo")
	if err != nil || p.Name != "demo" {
		t.Fatalf("Add = %+v, %v", p, err)
	}
	if _, err := a.Projects.Select(p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Agents.Create(p.ID, supervisor.AgentSpec{ID: "bad", Command: " "}); err == nil ||
		!strings.Contains(err.Error(), "command is empty") {
		t.Fatalf("Create with no command: %v", err)
	}
	spec := supervisor.AgentSpec{ID: "talker", Command: "sh",
		Args: []string{"-c", "echo first; sleep 0.3; echo second; exec sleep 30"}, GraceSec: 1}
	if _, err := a.Agents.Create(p.ID, spec); err != nil {
		t.Fatal(err)
	}
	chunk, err := a.Logs.Tail(p.ID, "talker", 10)
	if err != nil || len(chunk.Lines) != 0 {
		t.Fatalf("Tail before start = %+v, %v", chunk, err)
	}
	if err := a.Logs.Follow(p.ID, "talker", chunk.Offset); err != nil {
		t.Fatal(err)
	}
	r, err := a.Agents.Start(p.ID, "talker")
	if err != nil || r.Status != "running" {
		t.Fatalf("Start = %+v, %v", r, err)
	}
	testutil.Eventually(t, "both log lines pushed", func() bool {
		l := rec.logLines()
		return len(l) == 2 && l[0] == "first" && l[1] == "second"
	})
	list, err := a.Projects.List()
	if err != nil || len(list) != 1 || list[0].Running != 1 || !list[0].Loaded {
		t.Fatalf("List = %+v, %v", list, err)
	}
	r, err = a.Agents.Stop(p.ID, "talker", 1)
	if err != nil || r.Status != "stopped" {
		t.Fatalf("Stop = %+v, %v", r, err)
	}
	if rec.count("agent:state") < 3 {
		t.Fatalf("agent:state pushed %d times", rec.count("agent:state"))
	}
	evs, err := a.Agents.Events(p.ID, "talker", 100)
	if err != nil || len(evs) < 3 || evs[0].Event != "created" {
		t.Fatalf("Events = %+v, %v", evs, err)
	}
	a.Logs.Unfollow(p.ID, "talker")
	if err := a.Agents.Remove(p.ID, "talker", false, true); err != nil {
		t.Fatal(err)
	}
	if l, _ := a.Agents.List(p.ID); len(l) != 0 {
		t.Fatalf("agents after remove: %d", len(l))
	}
}

func TestServicesWithoutEngine(t *testing.T) {
	a := New("test")
	if _, err := a.Projects.List(); err == nil {
		t.Fatal("List without an engine succeeded")
	}
	if _, err := a.Agents.Start("p", "a"); err == nil {
		t.Fatal("Start without an engine succeeded")
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
	p, err := a.Projects.Add(t.TempDir(), "n")
	if err != nil {
		t.Fatal(err)
	}
	fail := func(id string) {
		if _, err := a.Agents.Create(p.ID, supervisor.AgentSpec{ID: id, Command: "/bin/sh", Args: []string{"-c", "exit 3"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Agents.Start(p.ID, id); err != nil {
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
	s, _ := a.Settings.Get(p.ID)
	s.NotifyNative = false
	if _, err := a.Settings.Put(p.ID, s); err != nil {
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
			p, err := a.Projects.Add(t.TempDir(), "")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Agents.Create(p.ID, supervisor.AgentSpec{ID: "sleeper", Command: "sleep", Args: []string{"30"}, GraceSec: 1}); err != nil {
				t.Fatal(err)
			}
			r, err := a.Agents.Start(p.ID, "sleeper")
			if err != nil {
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

// LookPath asks the engine: a command on its PATH, a relative path from the
// given folder, and a missing one as an error.
func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "tool")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	a, _ := startApp(t)
	s := a.Agents
	if p, err := s.LookPath("sh", ""); err != nil || p == "" {
		t.Fatalf("LookPath(sh) = %q, %v", p, err)
	}
	if p, err := s.LookPath("./tool", dir); err != nil || p != exe {
		t.Fatalf("LookPath(./tool) = %q, %v; want %q", p, err, exe)
	}
	if _, err := s.LookPath("no-such-command-shepherd", dir); err == nil {
		t.Fatal("LookPath of a missing command succeeded")
	}
}

// The project list carries what its agents' runs cost (the window's header
// reads today's cost from it).
func TestProjectListCarriesCost(t *testing.T) {
	a, _ := startApp(t)
	p, err := a.Projects.Add(t.TempDir(), "costly")
	if err != nil {
		t.Fatal(err)
	}
	line := `{"type":"result","subtype":"success","is_error":false,"duration_ms":900,"num_turns":2,` +
		`"total_cost_usd":0.25,"session_id":"3f2a9c4e-8b1d-4e6f-a2c7-5d9e0f1b3a71","result":"done",` +
		`"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":7}}`
	spec := supervisor.AgentSpec{ID: "paid", Command: "sh", Profile: "claude-stream-json",
		Args: []string{"-c", "echo '" + line + "'"}, GraceSec: 1}
	if _, err := a.Agents.Create(p.ID, spec); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Agents.Start(p.ID, "paid"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the run's cost in the project list", func() bool {
		list, err := a.Projects.List()
		return err == nil && len(list) == 1 && list[0].Totals != nil && list[0].Totals.CostUSD != nil &&
			*list[0].Totals.CostUSD == 0.25 && list[0].CostToday == 0.25
	})
}

// The project's Needs you count is the engine's attention: a failure counts
// until it is acknowledged.
func TestProjectListCountsAttention(t *testing.T) {
	a, _ := startApp(t)
	p, err := a.Projects.Add(t.TempDir(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Projects.Select(p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Agents.Create(p.ID, supervisor.AgentSpec{ID: "bad", Command: "sh", Args: []string{"-c", "exit 3"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Agents.Start(p.ID, "bad"); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		list, err := a.Projects.List()
		if err != nil || len(list) != 1 {
			t.Fatalf("List = %+v, %v", list, err)
		}
		return list[0].Attention
	}
	testutil.Eventually(t, "the failure counted", func() bool { return count() == 1 })
	if _, err := a.Agents.Ack(p.ID, "bad"); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Fatalf("after ack: %d in Needs you", n)
	}
}
