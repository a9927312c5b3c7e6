package supervisor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"shepherd/backend/lifecycle"
	"shepherd/backend/logtail"
	"shepherd/backend/proc"
	"shepherd/backend/procid"
	"shepherd/backend/store"
	"shepherd/internal/testutil"
)

// After Close, no goroutine of the engine is left: not the exit watchers of
// agents that keep running, not a run whose end another path recorded (the
// orphan path once left a log follower polling until Close), not a timer
// callback, not a stop under way.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newClaudeHarness(t)
	h.claude("silent", "silent", "silent")                                              // stays running: its watcher must end
	h.create(withID("short", sh("exit 0")))                                             // ended and recorded
	h.create(withID("slow", sh(`trap "" TERM; echo ready; while :; do sleep 1; done`))) // a stop under way at Close
	h.create(AgentSpec{ID: "loop", Command: "/bin/sh", Args: []string{"-c", "exit 1"}, KeepAlive: true})
	h.create(AgentSpec{ID: "timeout", Command: "/bin/sh", Args: []string{"-c", "sleep 300"}, TimeoutSec: 3600})
	for _, id := range []string{"short", "slow", "loop", "timeout"} {
		h.start(id)
	}
	h.waitStatus("short", lifecycle.Completed)
	h.waitLog("slow", "ready")
	testutil.Eventually(t, "a pending restart", func() bool { return h.get("loop").NextRestartAt != nil })

	// A run whose end the watchdog records (its watcher is blind).
	h.create(withID("blind", sh("exec sleep 300")))
	r := h.start("blind")
	_, a, _ := h.e.agent(h.project.ID, "blind")
	a.mu.Lock()
	a.run = newRun(h.e.runner.Attach(a.run.p.Identity))
	a.mu.Unlock()
	syscall.Kill(r.PID, syscall.SIGKILL)
	testutil.Eventually(t, "process gone", func() bool { return !procid.Alive(r.PID) })
	h.e.WatchdogNow(h.project.ID)
	h.e.WatchdogNow(h.project.ID)
	h.waitStatus("blind", lifecycle.Failed)

	stopping := make(chan struct{})
	go func() {
		defer close(stopping)
		h.e.StopAgent(context.Background(), h.project.ID, "slow", nil) // grace on the fake clock: waits
	}()
	h.waitStatus("slow", lifecycle.Stopping)
	h.e.Close()
	<-stopping // the stop gave up when the engine closed
	if got := h.diskRecord("slow").Status; got != lifecycle.Stopping {
		t.Fatalf("a stop cut short by Close is left for the next engine: status %s", got)
	}
}

// A removed agent never writes a record or starts a process again, even
// when a stale recovery was under way: the remove comes between the kill
// and the resume.
func TestRemoveDuringStaleRecovery(t *testing.T) {
	h := newClaudeHarness(t)
	removed := make(chan error, 1)
	h.e.testHooks.afterStaleKill = func(id string) {
		removed <- h.e.RemoveAgent(context.Background(), h.project.ID, id, true, false)
	}
	h.claude("a", "silent", "success")
	h.waitSession("a", sess(1))
	h.goStale()
	if err := <-removed; err != nil {
		t.Fatalf("remove during recovery: %v", err)
	}
	dir := h.e.Store().AgentDir(h.project.ID, "a")
	// The recovery has gone on past the hook: wait for it to end (its flag
	// is cleared last), then look.
	testutil.Eventually(t, "recovery over", func() bool { return len(h.e.recoverySlots) == 0 })
	if _, err := os.Stat(filepath.Join(dir, "record.json")); !os.IsNotExist(err) {
		t.Fatalf("record.json of a removed agent: %v", err)
	}
	if inv := h.invocations(); len(inv) != 1 {
		t.Fatalf("the removed agent was started again: %+v", inv)
	}
	if _, err := h.e.GetAgent(h.project.ID, "a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get after remove: %v", err)
	}
	if strings.Contains(h.events(), `"reason":"auto-resume"`) {
		t.Fatal("auto-resume after remove")
	}
}

// Close stops every timer of the engine: a pending keep-alive restart, a
// timeout, the monitors, the log poller. After it, the clock has no one
// waiting on it, so nothing can fire later.
func TestNoTimerOutlivesClose(t *testing.T) {
	h := newClaudeHarness(t)
	h.create(AgentSpec{ID: "loop", Command: "/bin/sh", Args: []string{"-c", "exit 1"}, KeepAlive: true})
	h.create(AgentSpec{ID: "timeout", Command: "/bin/sh", Args: []string{"-c", "sleep 300"}, TimeoutSec: 3600})
	h.start("loop")
	h.start("timeout")
	testutil.Eventually(t, "a pending restart", func() bool { return h.get("loop").NextRestartAt != nil })
	h.e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := h.clk.BlockUntilContext(ctx, 0); err != nil {
		t.Fatalf("timers still armed after Close: %v", err)
	}
	before := h.events()
	h.clk.Advance(time.Hour) // fires nothing: nothing is armed
	if h.events() != before {
		t.Fatalf("the engine wrote after Close:\n%s", strings.TrimPrefix(h.events(), before))
	}
}

// A recovery that takes long (a stubborn agent's grace) runs beside the
// monitors: the watchdog still finds another agent's orphaned process, and
// a settings change does not wait for the recovery.
func TestSlowRecoveryDoesNotDelayChecks(t *testing.T) {
	h := newClaudeHarness(t)
	s := DefaultSettings()
	s.WatchdogIntervalSec, s.StaleCheckIntervalSec, s.StaleThresholdSec = 1, 1, 10
	if _, err := h.e.PutSettings(h.project.ID, s); err != nil {
		t.Fatal(err)
	}
	// A generic agent whose log says it is done, that ignores SIGTERM: the
	// stale recovery marks it completed and waits its grace (an hour).
	h.create(AgentSpec{ID: "stubborn", Command: "/bin/sh", Args: []string{"-c", `trap "" TERM; echo DONE; while :; do sleep 1; done`},
		CompletionPattern: "DONE", StaleCheck: store.Ptr(true), OnStale: store.OnStaleResume, GraceSec: 3600})
	h.start("stubborn")
	testutil.Eventually(t, "log written", func() bool { return logtail.Size(h.get("stubborn").LogPath) > 0 })
	h.e.PollLogsNow()
	h.clk.Advance(11 * time.Second)
	testutil.Eventually(t, "stale recovery under way", func() bool {
		return strings.Contains(h.events(), `"action":"completed"`)
	})

	// Another agent's process vanishes without layer 1 seeing it.
	h.create(withID("blind", sh("exec sleep 300")))
	r := h.start("blind")
	_, a, _ := h.e.agent(h.project.ID, "blind")
	a.mu.Lock()
	a.run = newRun(h.e.runner.Attach(a.run.p.Identity))
	a.mu.Unlock()
	syscall.Kill(r.PID, syscall.SIGKILL)
	testutil.Eventually(t, "process gone", func() bool { return !procid.Alive(r.PID) })
	testutil.Eventually(t, "orphan found by the watchdog's timer", func() bool {
		h.clk.Advance(time.Second)
		return h.get("blind").Status == lifecycle.Failed
	})
	done := make(chan struct{})
	go func() {
		s.StaleThresholdSec = 20
		h.e.PutSettings(h.project.ID, s)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a settings change waited for a recovery")
	}
	if st := h.get("stubborn").Status; st != lifecycle.Running {
		t.Fatalf("the stubborn agent's recovery should still wait its grace: %s", st)
	}
}

// The stop grace is on the engine's clock: a stop of an agent that ignores
// SIGTERM waits until the clock has moved by the grace, then kills it.
func TestStopGraceOnEngineClock(t *testing.T) {
	h := newClaudeHarness(t)
	h.create(AgentSpec{ID: "a", Command: "/bin/sh", Args: []string{"-c", `trap "" TERM; echo ready; while :; do sleep 1; done`}, GraceSec: 30})
	h.start("a")
	h.waitLog("a", "ready")
	type res struct {
		r   *store.Record
		err error
	}
	got := make(chan res, 1)
	go func() {
		r, err := h.e.StopAgent(context.Background(), h.project.ID, "a", nil)
		got <- res{r, err}
	}()
	h.waitStatus("a", lifecycle.Stopping)
	// The stop waits on the clock; its timer is one of the clock's waiters.
	select {
	case r := <-got:
		t.Fatalf("stop returned before its grace: %+v", r)
	default:
	}
	// The grace timer may not be armed yet when the status reads stopping:
	// the clock moves on in steps until the stop ends.
	deadline := time.After(10 * time.Second)
	for done := false; !done; {
		h.clk.Advance(30 * time.Second)
		select {
		case r := <-got:
			if r.err != nil || r.r.Status != lifecycle.Stopped || r.r.Signal != "SIGKILL" {
				t.Fatalf("stop: %v %s %q", r.err, r.r.Status, r.r.Signal)
			}
			done = true
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatal("stop did not end after its grace")
		}
	}
	if !strings.Contains(h.events(), `"to":"killing"`) {
		t.Fatal("no killing transition")
	}
}

// A record with a status no engine knows is quarantined like any corrupt
// record, reported at select, and the other agents load.
func TestUnknownStatusIsQuarantined(t *testing.T) {
	h := newHarness(t)
	h.create(withID("good", sh("exit 0")))
	h.create(withID("bad", sh("exit 0")))
	path := filepath.Join(h.e.Store().AgentDir(h.project.ID, "bad"), "record.json")
	b, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(b), `"status": "not_started"`, `"status": "bogus"`, 1)), 0o600)
	e2 := h.engine()
	sum, err := e2.SelectProject(context.Background(), h.project.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Corrupt) != 1 || sum.Corrupt[0].AgentID != "bad" || !strings.Contains(sum.Corrupt[0].Problem, `unknown status "bogus"`) {
		t.Fatalf("corrupt: %+v", sum.Corrupt)
	}
	if _, err := e2.GetAgent(h.project.ID, "good"); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) != 1 {
		t.Fatalf("not moved aside: %v", m)
	}
}

// A project is loaded once, whoever asks first: the start-up load and a
// select at the same moment sync it once, and select reports it once.
func TestLoadIsSingleFlight(t *testing.T) {
	h := newHarness(t)
	for _, id := range []string{"a", "b", "c"} {
		h.create(withID(id, sh("exit 0")))
	}
	rec := &recorder{}
	e2 := h.engine(func(c *Config) { c.Emitter = rec })
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(2)
		go func() { defer wg.Done(); e2.LoadAll() }()
		go func() { defer wg.Done(); e2.SelectProject(context.Background(), h.project.ID) }()
	}
	wg.Wait()
	if n := strings.Count(h.events(), `"event":"project:synced"`); n != 2 { // the first engine's load, and this one's
		t.Fatalf("%d loads logged, want one per engine", n)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	n := 0
	for _, ev := range rec.events {
		if ev == EventProjectSynced {
			n++
		}
	}
	if n != 4 { // one per select
		t.Fatalf("%d project:synced emitted for 4 selects", n)
	}
}

// A spawn the shim could not carry out goes back to the status the agent
// came from, with the reason, and nothing else.
func TestFailedSpawnRevertsToPreviousStatus(t *testing.T) {
	h := newHarness(t)
	bad := filepath.Join(t.TempDir(), "not-a-program")
	os.WriteFile(bad, []byte("\x7fELF garbage"), 0o700) // executable bit, not executable
	h.create(AgentSpec{ID: "a", Command: "/bin/sh", Args: []string{"-c", "exit 0"}})
	h.start("a")
	h.waitStatus("a", lifecycle.Completed)
	if _, err := h.e.UpdateAgent(h.project.ID, AgentSpec{ID: "a", Command: bad}); err != nil {
		t.Fatal(err)
	}
	_, err := h.e.StartAgent(context.Background(), h.project.ID, "a")
	wantKind(t, err, ErrStartFailed, "Failed to start process 'a'")
	r := h.get("a")
	if r.Status != lifecycle.Completed || !strings.Contains(r.Error, "exec format error") || r.ShimPID != 0 || r.PreviousStatus != "" {
		t.Fatalf("after a failed spawn: %s %q shim %d prev %q", r.Status, r.Error, r.ShimPID, r.PreviousStatus)
	}
	if !strings.Contains(h.events(), `"from":"spawning","to":"completed","reason":"spawn failed"`) {
		t.Fatalf("no revert transition:\n%s", h.events())
	}
}

// The engine dies after recording the spawn but before letting the shim
// start the agent: the shim ends on its own and the next engine puts the
// agent back where it was. Nothing ran, nothing is left.
func TestEngineDiesBeforeGoAhead(t *testing.T) {
	h := newHarness(t)
	h.create(withID("a", sh("echo ran; sleep 300")))
	pend := h.spawnRecorded("a")
	h.e.Close()
	pend.Abort() // the engine's end closes its end of the pipe
	e2 := h.engine()
	sum, err := e2.SelectProject(context.Background(), h.project.ID)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e2.GetAgent(h.project.ID, "a")
	if r.Status != lifecycle.NotStarted || sum.Agents[0].Outcome != OutcomeNeverStarted || r.PID != 0 {
		t.Fatalf("after a spawn that never happened: %s outcome %s pid %d", r.Status, sum.Agents[0].Outcome, r.PID)
	}
	if b, _ := os.ReadFile(r.LogPath); strings.Contains(string(b), "ran") {
		t.Fatal("the agent ran")
	}
	// It can be started as usual.
	if _, err := e2.StartAgent(context.Background(), h.project.ID, "a"); err != nil {
		t.Fatal(err)
	}
}

// The engine dies after the shim started the agent but before recording
// its pid: the next engine finds it through the shim's run file and
// re-attaches it — one process, never a second one.
func TestEngineDiesBeforeRecordingPID(t *testing.T) {
	h := newHarness(t)
	h.create(withID("a", sh("echo ran; sleep 300")))
	pend := h.spawnRecorded("a")
	p, err := pend.Go()
	if err != nil {
		t.Fatal(err)
	}
	h.e.Close()
	e2 := h.engine()
	if _, err := e2.SelectProject(context.Background(), h.project.ID); err != nil {
		t.Fatal(err)
	}
	r, _ := e2.GetAgent(h.project.ID, "a")
	if r.Status != lifecycle.Running || r.PID != p.PID || r.Attached {
		t.Fatalf("re-attached: %s pid %d (want %d) attached %v", r.Status, r.PID, p.PID, r.Attached)
	}
	_, err = e2.StartAgent(context.Background(), h.project.ID, "a")
	wantKind(t, err, ErrAlreadyRunning, "")
	if _, err := e2.StopAgent(context.Background(), h.project.ID, "a", nil); err != nil {
		t.Fatal(err)
	}
	if procid.Alive(p.PID) {
		t.Fatal("still alive after stop")
	}
}

// spawnRecorded does what a start does up to the go-ahead: the shim waits,
// the record says spawning with the shim's identity.
func (h *harness) spawnRecorded(id string) *proc.Pending {
	h.t.Helper()
	_, a, err := h.e.agent(h.project.ID, id)
	if err != nil {
		h.t.Fatal(err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	spec, err := h.e.procSpec(a.rec, a.rec.Args, "")
	if err != nil {
		h.t.Fatal(err)
	}
	pend, err := h.e.runner.Prepare(spec)
	if err != nil {
		h.t.Fatal(err)
	}
	prev := a.rec.Status
	if err := h.e.apply(a, lifecycle.Spawning, "start", func(r *store.Record) {
		r.PreviousStatus, r.ShimPID, r.ShimStartTime, r.BootID = prev, pend.ShimPID, pend.ShimStartTime, h.e.bootID
	}); err != nil {
		h.t.Fatal(err)
	}
	return pend
}
