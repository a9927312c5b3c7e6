package supervisor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"shepherd/backend/lifecycle"
	"shepherd/backend/procid"
	"shepherd/internal/testutil"
)

// TC-001: create → not_started, start → running, stop → stopped.
func TestTC001StartStopCycle(t *testing.T) {
	h := newHarness(t)
	r := h.create(withID("a", sh("echo hello; exec sleep 300")))
	if r.Status != lifecycle.NotStarted || r.Desired != lifecycle.DesiredStopped {
		t.Fatalf("created: status %s desired %s", r.Status, r.Desired)
	}
	r = h.start("a")
	if r.Status != lifecycle.Running || r.PID <= 0 || r.ProcessStartTime == 0 || r.BootID == "" || r.StartedAt == nil {
		t.Fatalf("started: %+v", r)
	}
	if got := procid.Compare(r.PID, r.ProcessStartTime); got != procid.Same {
		t.Fatalf("identity of started pid: %s", got)
	}
	// Its own session and group: the agent leads its group, the shim the session.
	pgid, _ := syscall.Getpgid(r.PID)
	if pgid != r.PID {
		t.Fatalf("agent pgid %d, want its own pid %d", pgid, r.PID)
	}
	if sid, _ := unix.Getsid(r.PID); sid != r.ShimPID {
		t.Fatalf("agent session %d, want the shim's %d", sid, r.ShimPID)
	}
	testutil.Eventually(t, "log line", func() bool {
		b, _ := h.e.LogTail(h.project.ID, "a", 10)
		return strings.Contains(string(b), "hello")
	})
	if d := h.diskRecord("a"); d.Status != lifecycle.Running || d.PID != r.PID {
		t.Fatalf("record on disk: %s pid %d", d.Status, d.PID)
	}
	g := 2 * time.Second
	r, err := h.e.StopAgent(context.Background(), h.project.ID, "a", &g)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != lifecycle.Stopped || r.ExitReason != lifecycle.ReasonStoppedByUser || r.Desired != lifecycle.DesiredStopped {
		t.Fatalf("stopped: %s %s %s", r.Status, r.ExitReason, r.Desired)
	}
	if r.Signal != "SIGTERM" || r.StoppedAt == nil {
		t.Fatalf("stopped by %q at %v, want SIGTERM", r.Signal, r.StoppedAt)
	}
	if procid.GroupAlive(r.PID) {
		t.Fatal("group still alive after stop")
	}
	want := []lifecycle.Status{lifecycle.NotStarted, lifecycle.Spawning, lifecycle.Running, lifecycle.Stopping, lifecycle.Stopped}
	if diff := cmp.Diff(want, h.rec.statuses("a")); diff != "" {
		t.Fatalf("pushed statuses (-want +got):\n%s", diff)
	}
	ev := h.events()
	for _, s := range []string{`"from":"running","to":"stopping"`, `"from":"stopping","to":"stopped"`} {
		if !strings.Contains(ev, s) {
			t.Fatalf("events.jsonl lacks %s:\n%s", s, ev)
		}
	}
	if d := h.diskRecord("a"); d.Status != lifecycle.Stopped {
		t.Fatalf("record on disk: %s", d.Status)
	}
}

// TC-002 and the other exits the engine sees itself (layer 1).
func TestExitsSeenAtOnce(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		id, script string
		status     lifecycle.Status
		reason     lifecycle.ExitReason
		code       *int
		signal     string
		errText    string
	}{
		{"ok", "exit 0", lifecycle.Completed, lifecycle.ReasonCompleted, intp(0), "", ""},
		{"three", "echo boom >&2; exit 3", lifecycle.Failed, lifecycle.ReasonFailed, intp(3), "", "Process exited with code 3"},
		{"killed", "kill -9 $$", lifecycle.Failed, lifecycle.ReasonCrashed, nil, "SIGKILL", "Process was killed by SIGKILL"},
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			h.create(withID(tc.id, sh(tc.script)))
			h.start(tc.id)
			r := h.waitStatus(tc.id, tc.status)
			if r.ExitReason != tc.reason || r.Signal != tc.signal || r.Error != tc.errText {
				t.Fatalf("got reason %q signal %q error %q", r.ExitReason, r.Signal, r.Error)
			}
			if diff := cmp.Diff(tc.code, r.ExitCode); diff != "" {
				t.Fatalf("exit code (-want +got):\n%s", diff)
			}
			if r.StoppedAt == nil || r.StoppedAt.Before(*r.StartedAt) {
				t.Fatalf("stoppedAt %v startedAt %v", r.StoppedAt, r.StartedAt)
			}
			if d := h.diskRecord(tc.id); d.Status != tc.status {
				t.Fatalf("disk says %s", d.Status)
			}
		})
	}
	b, _ := h.e.LogTail(h.project.ID, "three", 5)
	if !strings.Contains(string(b), "boom") {
		t.Fatalf("stderr not in log: %q", b)
	}
}

func intp(i int) *int { return &i }

// TC-003 and every named error of the operations.
func TestNamedErrors(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	pid := h.project.ID
	h.create(withID("idle", sh("exit 0")))

	_, err := h.e.StopAgent(ctx, pid, "idle", nil)
	wantKind(t, err, ErrNotRunning, "Process 'idle' is not running")

	_, err = h.e.StartAgent(ctx, pid, "ghost")
	wantKind(t, err, ErrNotFound, "Process 'ghost' not found")
	_, err = h.e.StopAgent(ctx, pid, "ghost", nil)
	wantKind(t, err, ErrNotFound, "")
	_, err = h.e.GetAgent(pid, "ghost")
	wantKind(t, err, ErrNotFound, "")
	wantKind(t, h.e.RemoveAgent(ctx, pid, "ghost", false, false), ErrNotFound, "")
	_, err = h.e.LogTail(pid, "ghost", 1)
	wantKind(t, err, ErrNotFound, "")

	_, err = h.e.CreateAgent(pid, withID("idle", sh("exit 0")))
	wantKind(t, err, ErrAlreadyExists, "Process 'idle' already exists")

	_, err = h.e.ListAgents("no-such-project")
	wantKind(t, err, ErrProjectNotFound, "Project 'no-such-project' not found")

	// Start failure: the record keeps its previous status and gets the error.
	h.create(AgentSpec{ID: "missing", Command: "no-such-command-xyz"})
	_, err = h.e.StartAgent(ctx, pid, "missing")
	wantKind(t, err, ErrStartFailed, "Failed to start process 'missing': exec: \"no-such-command-xyz\": executable file not found")
	r := h.get("missing")
	if r.Status != lifecycle.NotStarted || !strings.Contains(r.Error, "Failed to start process 'missing'") || r.PID != 0 {
		t.Fatalf("after failed start: %s error %q pid %d", r.Status, r.Error, r.PID)
	}
	if d := h.diskRecord("missing"); d.Status != lifecycle.NotStarted {
		t.Fatalf("disk after failed start: %s", d.Status)
	}
	notExec := filepath.Join(h.project.Path, "script.sh")
	os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644)
	h.create(AgentSpec{ID: "noexec", Command: "./script.sh"})
	_, err = h.e.StartAgent(ctx, pid, "noexec")
	wantKind(t, err, ErrStartFailed, "permission denied")

	// A live agent cannot be started again nor removed without force.
	h.create(withID("live", sh("exec sleep 300")))
	h.start("live")
	_, err = h.e.StartAgent(ctx, pid, "live")
	wantKind(t, err, ErrAlreadyRunning, "Process 'live' is already running")
	wantKind(t, h.e.RemoveAgent(ctx, pid, "live", false, false), ErrIsRunning, "Process is running. Stop it before removing.")
	if h.get("live").Status != lifecycle.Running {
		t.Fatal("refused remove changed the agent")
	}
}

func TestCreateValidation(t *testing.T) {
	h := newHarness(t)
	file := filepath.Join(h.project.Path, "file")
	os.WriteFile(file, nil, 0o600)
	cases := []struct {
		name string
		spec AgentSpec
		want string
	}{
		{"empty command", AgentSpec{ID: "a", Command: "  "}, "command is empty"},
		{"unsafe id", AgentSpec{ID: "../evil", Command: "true"}, "not a safe file name"},
		{"empty id", AgentSpec{ID: "", Command: "true"}, "not a safe file name"},
		{"cwd missing", AgentSpec{ID: "a", Command: "true", Cwd: "/no/such/folder"}, "/no/such/folder does not exist"},
		{"cwd is a file", AgentSpec{ID: "a", Command: "true", Cwd: file}, "is not a folder"},
		{"bad profile", AgentSpec{ID: "a", Command: "true", Profile: "yaml"}, `unknown profile "yaml"`},
		{"negative timeout", AgentSpec{ID: "a", Command: "true", TimeoutSec: -1}, "timeoutSec"},
		{"negative grace", AgentSpec{ID: "a", Command: "true", GraceSec: -5}, "graceSec"},
		{"bad env", AgentSpec{ID: "a", Command: "true", Env: map[string]string{"A=B": "c"}}, "environment variable name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.e.CreateAgent(h.project.ID, tc.spec)
			wantKind(t, err, ErrValidation, tc.want)
		})
	}
	if recs, _ := h.e.ListAgents(h.project.ID); len(recs) != 0 {
		t.Fatalf("invalid creates left %d records", len(recs))
	}
	if _, err := os.Stat(filepath.Join(h.e.Store().ProjectDir(h.project.ID), "agents")); !os.IsNotExist(err) {
		t.Fatalf("invalid creates wrote files: %v", err)
	}
	// A relative cwd is taken inside the project; the default is the project.
	os.Mkdir(filepath.Join(h.project.Path, "sub"), 0o700)
	r := h.create(AgentSpec{ID: "rel", Command: "true", Cwd: "sub"})
	if r.Cwd != filepath.Join(h.project.Path, "sub") {
		t.Fatalf("cwd %s", r.Cwd)
	}
	if r := h.create(AgentSpec{ID: "def", Command: "true"}); r.Cwd != h.project.Path || r.GraceSec != 2 {
		t.Fatalf("cwd %s grace %d", r.Cwd, r.GraceSec)
	}
	if r, _ := h.e.CreateAgent(h.project.ID, AgentSpec{ID: "grace", Command: "true"}); r.GraceSec != 10 {
		t.Fatalf("default grace %d, want 10", r.GraceSec)
	}
}

// TC-004: of concurrent starts exactly one wins.
func TestTC004ConcurrentStarts(t *testing.T) {
	h := newHarness(t)
	h.create(withID("a", sh("echo started; exec sleep 300")))
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = h.e.StartAgent(context.Background(), h.project.ID, "a")
		}()
	}
	close(start)
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, ErrAlreadyRunning):
		default:
			t.Fatalf("unexpected error %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d starts succeeded, want exactly 1", ok)
	}
	// Every start has returned, so every spawn has happened: one.
	if n := strings.Count(h.events(), `"to":"running"`); n != 1 {
		t.Fatalf("%d runs started, want 1", n)
	}
	testutil.Eventually(t, "log", func() bool {
		b, _ := h.e.LogTail(h.project.ID, "a", 10)
		return strings.Count(string(b), "started") == 1
	})
}

// An agent that ignores SIGTERM and has a grandchild: after the grace the
// whole group is SIGKILLed and nothing survives.
func TestStopStubbornWithGrandchild(t *testing.T) {
	h := newHarness(t)
	h.create(withID("stub", sh(`trap "" TERM; sleep 300 & sleep 300 & echo ready; wait`)))
	r := h.start("stub")
	testutil.Eventually(t, "grandchildren", func() bool { return len(groupMembers(r.PID)) >= 3 })
	members := groupMembers(r.PID)
	g := 300 * time.Millisecond
	t0 := time.Now()
	r, err := h.e.StopAgent(context.Background(), h.project.ID, "stub", &g)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	if r.Status != lifecycle.Stopped || r.Signal != "SIGKILL" {
		t.Fatalf("status %s signal %q", r.Status, r.Signal)
	}
	if took < g {
		t.Fatalf("stop took %s, less than the grace %s", took, g)
	}
	for _, pid := range members {
		if procid.Alive(pid) {
			t.Fatalf("member %d of the group survived", pid)
		}
	}
	if !strings.Contains(strings.Join(statusStrings(h.rec.statuses("stub")), ","), "stopping,killing,stopped") {
		t.Fatalf("statuses %v lack stopping→killing→stopped", h.rec.statuses("stub"))
	}
}

func statusStrings(ss []lifecycle.Status) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// When the agent's main process ends, what it left in its group is stopped,
// and so is a descendant that escaped into a session of its own.
func TestLeftoversStoppedAfterMainExits(t *testing.T) {
	h := newHarness(t)
	pidFile := filepath.Join(t.TempDir(), "escaped.pid")
	h.create(withID("a", sh(`sleep 300 & setsid sleep 300 & echo $! > `+pidFile+`; sleep 0.2; exit 0`)))
	r := h.start("a")
	r = h.waitStatus("a", lifecycle.Completed)
	testutil.Eventually(t, "group gone", func() bool { return !procid.GroupAlive(r.PID) })
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	escaped, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if escaped <= 0 {
		t.Fatalf("pid file %q", b)
	}
	testutil.Eventually(t, "escaped descendant gone", func() bool { return !procid.Alive(escaped) })
}

// Layer 2: timeoutSec elapsed (on an injected clock) → timed_out → graceful
// stop → stopped/timed_out, and events.jsonl says auto-execution:timeout.
func TestTimeout(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, func(c *Config) { c.Clock = clk })
	h.create(AgentSpec{ID: "slow", Command: "/bin/sh", Args: []string{"-c", "exec sleep 300"}, TimeoutSec: 60, GraceSec: 2})
	h.start("slow")
	if err := clk.BlockUntilContext(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	clk.Advance(59 * time.Second) // the timeout's timer is not due yet: nothing can move
	if s := h.get("slow").Status; s != lifecycle.Running {
		t.Fatalf("before the timeout: %s", s)
	}
	clk.Advance(time.Second)
	r := h.waitStatus("slow", lifecycle.Stopped)
	if r.ExitReason != lifecycle.ReasonTimedOut || r.Error != "Timed out after 60 s" || r.Desired != lifecycle.DesiredStopped {
		t.Fatalf("reason %s error %q desired %s", r.ExitReason, r.Error, r.Desired)
	}
	if procid.GroupAlive(r.PID) {
		t.Fatal("timed-out group still alive")
	}
	ev := h.events()
	if !strings.Contains(ev, `"event":"auto-execution:timeout","agentId":"slow"`) {
		t.Fatalf("no timeout event:\n%s", ev)
	}
	want := []lifecycle.Status{lifecycle.Running, lifecycle.TimedOut, lifecycle.Stopping, lifecycle.Stopped}
	got := h.rec.statuses("slow")
	if diff := cmp.Diff(want, got[len(got)-4:]); diff != "" {
		t.Fatalf("statuses (-want +got):\n%s", diff)
	}
}

func TestStopAllAndRemove(t *testing.T) {
	h := newHarness(t)
	for _, id := range []string{"a", "b", "c"} {
		h.create(withID(id, sh("echo "+id+"; exec sleep 300")))
		h.start(id)
	}
	h.create(withID("idle", sh("exit 0")))
	res, err := h.e.StopAll(context.Background(), h.project.ID)
	if err != nil || len(res) != 3 {
		t.Fatalf("stop-all: %v %d results", err, len(res))
	}
	for _, r := range res {
		if r.Error != "" || r.Record.Status != lifecycle.Stopped {
			t.Fatalf("%s: %s %q", r.AgentID, r.Record.Status, r.Error)
		}
	}
	if s := h.get("idle").Status; s != lifecycle.NotStarted {
		t.Fatalf("stop-all touched an idle agent: %s", s)
	}
	// Remove keeps the log unless asked; force stops a live one first.
	if err := h.e.RemoveAgent(context.Background(), h.project.ID, "a", false, false); err != nil {
		t.Fatal(err)
	}
	dir := h.e.Store().AgentDir(h.project.ID, "a")
	if _, err := os.Stat(filepath.Join(dir, "agent.log")); err != nil {
		t.Fatalf("log not kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "record.json")); !os.IsNotExist(err) {
		t.Fatalf("record not removed: %v", err)
	}
	if _, err := h.e.GetAgent(h.project.ID, "a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("removed agent still known: %v", err)
	}
	r := h.start("b")
	if err := h.e.RemoveAgent(context.Background(), h.project.ID, "b", true, true); err != nil {
		t.Fatal(err)
	}
	if procid.GroupAlive(r.PID) {
		t.Fatal("forced remove left the process running")
	}
	if _, err := os.Stat(h.e.Store().AgentDir(h.project.ID, "b")); !os.IsNotExist(err) {
		t.Fatalf("agent folder kept with deleteLog: %v", err)
	}
	// The id is free again.
	h.create(withID("b", sh("exit 0")))
}

func TestProcessStopFailedWhenGroupOutlivesKill(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.KillConfirm = 100 * time.Millisecond })
	h.e.runner.GroupAlive = func(int, bool) bool { return true } // a group that outlives SIGKILL
	h.create(withID("a", sh(`trap "" TERM; exec sleep 300`)))
	h.start("a")
	g := 50 * time.Millisecond
	_, err := h.e.StopAgent(context.Background(), h.project.ID, "a", &g)
	wantKind(t, err, ErrStopFailed, "Failed to stop process 'a': process group")
	if r := h.get("a"); r.Status != lifecycle.Killing || !strings.Contains(r.Error, "Failed to stop") {
		t.Fatalf("after a failed stop: %s %q", r.Status, r.Error)
	}
}

func TestFilesArePrivate(t *testing.T) {
	h := newHarness(t)
	h.create(withID("a", sh("echo x")))
	h.start("a")
	h.waitStatus("a", lifecycle.Completed)
	dir := h.e.Store().AgentDir(h.project.ID, "a")
	for _, f := range []string{"record.json", "agent.log", "exit.json", "run.json"} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s mode %o, want 600", f, fi.Mode().Perm())
		}
	}
	for _, d := range []string{dir, filepath.Dir(dir), h.e.Store().ProjectDir(h.project.ID), h.data} {
		fi, _ := os.Stat(d)
		if fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s mode %o, want 700", d, fi.Mode().Perm())
		}
	}
	if fi, _ := os.Stat(h.e.Store().EventsPath(h.project.ID)); fi.Mode().Perm() != 0o600 {
		t.Fatalf("events.jsonl mode %o", fi.Mode().Perm())
	}
}

func TestProjects(t *testing.T) {
	h := newHarness(t)
	p, created, err := h.e.AddProject(h.project.Path+"/", "other name")
	if err != nil || created || p.ID != h.project.ID {
		t.Fatalf("same path again: %+v created=%v err=%v", p, created, err)
	}
	_, _, err = h.e.AddProject("/no/such/dir", "")
	wantKind(t, err, ErrValidation, "does not exist")
	// The list survives a new engine.
	e2 := h.engine()
	if ps := e2.Projects(); len(ps) != 1 || ps[0].ID != h.project.ID || ps[0].Path != h.project.Path {
		t.Fatalf("projects after restart: %+v", ps)
	}
}

// A refused transition changes nothing, says which move was refused, and is
// logged.
func TestRefusedTransitionThroughEngine(t *testing.T) {
	var logBuf syncBuffer
	h := newHarness(t, func(c *Config) { c.Logger = zerolog.New(&logBuf) })
	h.create(withID("a", sh("exit 0")))
	h.start("a")
	h.waitStatus("a", lifecycle.Completed)
	_, a, _ := h.e.agent(h.project.ID, "a")
	a.mu.Lock()
	err := h.e.apply(a, lifecycle.Running, "test", nil)
	a.mu.Unlock()
	wantKind(t, err, ErrTransition, "completed → running is not an allowed transition")
	if d := h.diskRecord("a"); d.Status != lifecycle.Completed {
		t.Fatalf("record changed to %s", d.Status)
	}
	if !strings.Contains(logBuf.String(), `"message":"transition refused"`) || !strings.Contains(logBuf.String(), `"to":"running"`) {
		t.Fatalf("refusal not logged: %s", logBuf.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Every agent's stdin is /dev/null: one that reads its stdin to the end
// (as Codex does with a non-TTY stdin) gets EOF at once instead of hanging
// on an open pipe.
func TestStdinIsDevNull(t *testing.T) {
	h := newHarness(t)
	h.create(withID("reader", sh(`n=$(cat | wc -c); echo "read $n bytes"; ls -l /proc/self/fd/0 2>/dev/null | grep -o '/dev/null' || readlink /proc/$$/fd/0`)))
	h.start("reader")
	r := h.waitStatus("reader", lifecycle.Completed)
	b, _ := os.ReadFile(r.LogPath)
	if !strings.Contains(string(b), "read 0 bytes") || !strings.Contains(string(b), "/dev/null") {
		t.Fatalf("log:\n%s", b)
	}
}
