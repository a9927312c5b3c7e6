package supervisor

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/procid"
	"shepherd/backend/store"
	"shepherd/internal/testutil"
)

// The crash test: agents started by an engine that is then SIGKILLed keep
// running; those that exit meanwhile are found with their real exit code and
// time by the next engine; live ones are re-attached and can be stopped; no
// agent is started twice.
func TestEngineCrashAndRestart(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	projDir := t.TempDir()
	stamp := `echo "started $$"; `
	agents := []AgentSpec{
		{ID: "long", Command: "/bin/sh", Args: []string{"-c", stamp + "while true; do echo tick; sleep 0.1; done"}, GraceSec: 2},
		{ID: "exit0", Command: "/bin/sh", Args: []string{"-c", stamp + "sleep 1; exit 0"}, GraceSec: 2},
		{ID: "exit3", Command: "/bin/sh", Args: []string{"-c", stamp + "sleep 1; exit 3"}, GraceSec: 2},
		{ID: "stubborn", Command: "/bin/sh", Args: []string{"-c", stamp + `trap "" TERM; sleep 300 & wait`}, GraceSec: 1},
	}
	crashEngine(t, data, projDir, agents)
	crashedAt := time.Now()

	h := &harness{t: t, data: data, rec: &recorder{}}
	h.e = h.engine()
	ps := h.e.Projects()
	if len(ps) != 1 {
		t.Fatalf("projects %+v", ps)
	}
	h.project = ps[0]
	before := map[string]*store.Record{}
	for _, a := range agents {
		before[a.ID] = h.diskRecord(a.ID)
		if before[a.ID].Status != lifecycle.Running {
			t.Fatalf("%s on disk after crash: %s", a.ID, before[a.ID].Status)
		}
	}
	// The engine died; the agents did not.
	for _, id := range []string{"long", "stubborn"} {
		if procid.Compare(before[id].PID, before[id].ProcessStartTime) != procid.Same {
			t.Fatalf("%s died with the engine", id)
		}
	}
	// Let the short ones exit while no engine watches.
	testutil.Eventually(t, "exits while away", func() bool {
		return !procid.Alive(before["exit0"].PID) && !procid.Alive(before["exit3"].PID)
	})
	// No pause here: a shim still writing exit.json is waited for.

	sum, err := h.e.SelectProject(context.Background(), h.project.ID)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Counts[OutcomeReattached] != 2 || sum.Counts[OutcomeExitedWhileClosed] != 2 || sum.Total != 4 {
		t.Fatalf("summary counts %v total %d", sum.Counts, sum.Total)
	}
	for _, o := range sum.Agents {
		want := map[string]string{"long": "running", "stubborn": "running", "exit0": "completed", "exit3": "failed"}[o.AgentID]
		if o.Status != want {
			t.Fatalf("summary says %s is %q, want %q", o.AgentID, o.Status, want)
		}
	}
	r0 := h.get("exit0")
	if r0.Status != lifecycle.Completed || r0.ExitReason != lifecycle.ReasonExitedWhileAppClosed || r0.ExitCode == nil || *r0.ExitCode != 0 {
		t.Fatalf("exit0: %s %s %v", r0.Status, r0.ExitReason, r0.ExitCode)
	}
	r3 := h.get("exit3")
	if r3.Status != lifecycle.Failed || r3.ExitCode == nil || *r3.ExitCode != 3 || r3.Error != "Process exited with code 3" {
		t.Fatalf("exit3: %s %v %q", r3.Status, r3.ExitCode, r3.Error)
	}
	// The real exit time: after the crash, about 1 s after the start, not now.
	for _, r := range []*store.Record{r0, r3} {
		if r.StoppedAt == nil || r.StoppedAt.Sub(*r.StartedAt) < 900*time.Millisecond || r.StoppedAt.After(crashedAt.Add(3*time.Second)) {
			t.Fatalf("%s: started %v stopped %v", r.ID, r.StartedAt, r.StoppedAt)
		}
		if r.PID != before[r.ID].PID {
			t.Fatalf("%s pid changed %d → %d", r.ID, before[r.ID].PID, r.PID)
		}
	}
	long := h.get("long")
	if long.Status != lifecycle.Running || long.Attached || long.PID != before["long"].PID {
		t.Fatalf("long: %s attached=%v pid %d", long.Status, long.Attached, long.PID)
	}
	// The re-attached agent's log tail keeps working (it keeps growing).
	tail1, _ := h.e.LogTail(h.project.ID, "long", 1000)
	testutil.Eventually(t, "log growth", func() bool {
		tail2, _ := h.e.LogTail(h.project.ID, "long", 1000)
		return len(tail2) > len(tail1)
	})
	// Re-attached agents are still watched: kill one from outside and the
	// engine sees the exit at once, with its real signal.
	syscall.Kill(long.PID, syscall.SIGKILL)
	r := h.waitStatus("long", lifecycle.Failed)
	if r.ExitReason != lifecycle.ReasonCrashed || r.Signal != "SIGKILL" {
		t.Fatalf("re-attached exit: %s %q", r.ExitReason, r.Signal)
	}
	// And can be stopped, stubborn grandchild included.
	st := h.get("stubborn")
	members := groupMembers(st.PID)
	g := 300 * time.Millisecond
	st, err = h.e.StopAgent(context.Background(), h.project.ID, "stubborn", &g)
	if err != nil || st.Status != lifecycle.Stopped {
		t.Fatalf("stop re-attached: %v %v", err, st)
	}
	for _, pid := range members {
		if procid.Alive(pid) {
			t.Fatalf("pid %d of the stubborn group survived", pid)
		}
	}
	// No agent was started twice.
	for _, a := range agents {
		b, _ := os.ReadFile(h.get(a.ID).LogPath)
		if n := strings.Count(string(b), "started "); n != 1 {
			t.Fatalf("%s started %d times", a.ID, n)
		}
	}
	// Selecting again changes nothing.
	sum, _ = h.e.SelectProject(context.Background(), h.project.ID)
	if sum.Counts[OutcomeUnchanged] != 4 {
		t.Fatalf("second select: %v", sum.Counts)
	}
}

// writeRecord puts a hand-made running record on disk for the next engine.
func writeRecord(t *testing.T, h *harness, r *store.Record) {
	t.Helper()
	r.ProjectID = h.project.ID
	r.LogPath = h.e.Store().LogPath(h.project.ID, r.ID)
	if r.Command == "" {
		r.Command = "/bin/true"
	}
	if r.Status == "" {
		r.Status = lifecycle.Running
	}
	if err := h.e.Store().SaveRecord(r); err != nil {
		t.Fatal(err)
	}
}

func TestSyncFindsTheTruth(t *testing.T) {
	h := newHarness(t)
	boot := h.e.BootID()

	// A live process that is not ours, with a pid a record names.
	other := exec.Command("sleep", "300")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	otherStart, _ := procid.StartTime(other.Process.Pid)

	// A process that ran and is gone, with no exit status.
	gone := exec.Command("true")
	gone.Run()

	old := exec.Command("sleep", "300")
	old.Start()
	t.Cleanup(func() { old.Process.Kill(); old.Wait() })

	writeRecord(t, h, &store.Record{ID: "reused", PID: other.Process.Pid, ProcessStartTime: otherStart - 3600_000, BootID: boot})
	writeRecord(t, h, &store.Record{ID: "otherboot", PID: other.Process.Pid, ProcessStartTime: otherStart, BootID: "another-boot"})
	writeRecord(t, h, &store.Record{ID: "dead", PID: gone.Process.Pid, ProcessStartTime: 12345, BootID: boot})
	writeRecord(t, h, &store.Record{ID: "oldrecord", PID: old.Process.Pid, BootID: boot})
	writeRecord(t, h, &store.Record{ID: "done", Status: lifecycle.Completed})
	// Corrupt records: garbage, and one whose id does not match its folder.
	badDir := h.e.Store().AgentDir(h.project.ID, "garbage")
	os.MkdirAll(badDir, 0o700)
	os.WriteFile(filepath.Join(badDir, "record.json"), []byte(`{"id":"garbage", "status": tru`), 0o600)
	misDir := h.e.Store().AgentDir(h.project.ID, "misfiled")
	os.MkdirAll(misDir, 0o700)
	os.WriteFile(filepath.Join(misDir, "record.json"), []byte(`{"id":"someone-else","command":"x","status":"running"}`), 0o600)

	e2 := h.engine()
	h.e = e2
	// The app loads every project at start; the select that follows still
	// reports what that load found.
	e2.LoadAll()
	// One summary for every project, before anyone opens it: what ended,
	// what was re-attached.
	wc := e2.WhileClosed()
	if wc == nil || len(wc.Projects) != 1 || wc.Projects[0].ProjectID != h.project.ID {
		t.Fatalf("while closed: %+v", wc)
	}
	for _, k := range []string{OutcomePIDReused, OutcomeOtherBoot, OutcomeUnknownExit, OutcomeReattached} {
		if wc.Projects[0].Counts[k] != 1 {
			t.Fatalf("while closed counts %v: want one %s", wc.Projects[0].Counts, k)
		}
	}
	if wc.Projects[0].Counts[OutcomeUnchanged] != 0 {
		t.Fatalf("while closed counts %v: agents that were simply not running are not news", wc.Projects[0].Counts)
	}
	if !strings.Contains(h.events(), `"event":"reattached"`) {
		t.Fatal("no reattached event in the history (the feed)")
	}
	sum, err := e2.SelectProject(context.Background(), h.project.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{OutcomePIDReused: 1, OutcomeOtherBoot: 1, OutcomeUnknownExit: 1, OutcomeReattached: 1, OutcomeUnchanged: 1, OutcomeCorrupt: 2}
	for k, v := range want {
		if sum.Counts[k] != v {
			t.Fatalf("counts %v, want %v", sum.Counts, want)
		}
	}

	r := h.get("reused")
	if r.Status != lifecycle.Interrupted || r.ExitReason != lifecycle.ReasonPIDReused {
		t.Fatalf("reused: %s %s", r.Status, r.ExitReason)
	}
	if !procid.Alive(other.Process.Pid) {
		t.Fatal("the process that reused the pid was signalled")
	}
	r = h.get("otherboot")
	if r.Status != lifecycle.Interrupted || r.ExitReason != lifecycle.ReasonExitedWhileAppClosed || r.PID != 0 {
		t.Fatalf("otherboot: %s %s pid %d", r.Status, r.ExitReason, r.PID)
	}
	r = h.get("dead")
	if r.Status != lifecycle.Interrupted || r.ExitReason != lifecycle.ReasonExitedWhileAppClosed || r.ExitCode != nil {
		t.Fatalf("dead: %s %s %v", r.Status, r.ExitReason, r.ExitCode)
	}
	r = h.get("oldrecord")
	if r.Status != lifecycle.Running || r.Attached {
		t.Fatalf("old record without start time: %s attached=%v", r.Status, r.Attached)
	}
	if d := h.diskRecord("reused"); d.Status != lifecycle.Interrupted {
		t.Fatalf("sync result not written: %s", d.Status)
	}
	if len(sum.Corrupt) != 2 {
		t.Fatalf("corrupt %+v", sum.Corrupt)
	}
	for _, c := range sum.Corrupt {
		if !strings.Contains(c.MovedTo, "record.json.corrupt-") || c.Problem == "" {
			t.Fatalf("corrupt entry %+v", c)
		}
		if _, err := os.Stat(c.MovedTo); err != nil {
			t.Fatalf("quarantined file: %v", err)
		}
	}
	if !strings.Contains(h.events(), `"event":"record:corrupt"`) {
		t.Fatal("no corrupt event")
	}
	if recs, _ := e2.ListAgents(h.project.ID); len(recs) != 5 {
		t.Fatalf("%d agents loaded, want the 5 good ones", len(recs))
	}
}

func TestAutoStartOnRestore(t *testing.T) {
	h := newHarness(t)
	h.create(AgentSpec{ID: "auto", Command: "/bin/sh", Args: []string{"-c", "exec sleep 300"}, AutoStartOnRestore: true})
	h.create(withID("manual", sh("exec sleep 300")))
	e2 := h.engine()
	h.e = e2
	sum, err := e2.SelectProject(context.Background(), h.project.ID)
	if err != nil || sum.Counts[OutcomeAutoStarted] != 1 {
		t.Fatalf("%v %v", err, sum)
	}
	if h.get("auto").Status != lifecycle.Running || h.get("manual").Status != lifecycle.NotStarted {
		t.Fatal("auto start started the wrong agents")
	}
}

// The engine died in the middle of a stop: the next one finishes it, and a
// stop that completed meanwhile is recorded as a stop (no recovery, no notice).
func TestStopInterruptedByEngineDeath(t *testing.T) {
	h := newHarness(t)
	h.create(AgentSpec{ID: "alive", Command: "/bin/sh", Args: []string{"-c", `trap "" TERM; exec sleep 300`}, GraceSec: 1})
	h.create(AgentSpec{ID: "gone", Command: "/bin/sh", Args: []string{"-c", "exec sleep 300"}, GraceSec: 1})
	alive, gone := h.start("alive"), h.start("gone")
	for _, id := range []string{"alive", "gone"} {
		_, a, _ := h.e.agent(h.project.ID, id)
		a.mu.Lock()
		if err := h.e.apply(a, lifecycle.Stopping, "stop", func(r *store.Record) { r.Desired = lifecycle.DesiredStopped }); err != nil {
			t.Fatal(err)
		}
		a.mu.Unlock()
	}
	h.e.Close() // dies before signalling
	syscall.Kill(gone.PID, syscall.SIGTERM)
	testutil.Eventually(t, "gone exits", func() bool { return !procid.Alive(gone.PID) })

	h.e = h.engine()
	if _, err := h.e.SelectProject(context.Background(), h.project.ID); err != nil {
		t.Fatal(err)
	}
	r := h.get("gone")
	if r.Status != lifecycle.Stopped || r.ExitReason != lifecycle.ReasonStoppedByUser || r.Signal != "SIGTERM" {
		t.Fatalf("gone: %s %s %q", r.Status, r.ExitReason, r.Signal)
	}
	r = h.waitStatus("alive", lifecycle.Stopped)
	if r.Signal != "SIGKILL" || procid.Alive(alive.PID) {
		t.Fatalf("alive: signal %q, still alive %v", r.Signal, procid.Alive(alive.PID))
	}
	if len(h.rec.notices) != 0 {
		t.Fatalf("a stop raised notices: %+v", h.rec.notices)
	}
}

// crashEngine runs an engine in a child process over data, with a project
// at projDir in which it creates and starts agents, then SIGKILLs it.
func crashEngine(t *testing.T, data, projDir string, agents []AgentSpec) {
	t.Helper()
	spec, _ := json.Marshal(agents)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "SHEPHERD_TEST_ENGINE="+data, "SHEPHERD_TEST_PROJECT="+projDir,
		"SHEPHERD_TEST_SHIM="+shimPath, "SHEPHERD_TEST_AGENTS="+string(spec))
	child.Stderr = os.Stderr
	out, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		child.Process.Kill()
		t.Fatalf("child engine said %q", line)
	}
	// Crash the engine.
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
}
