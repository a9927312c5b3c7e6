package supervisor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/logtail"
	"shepherd/backend/notify"
	"shepherd/backend/procid"
	"shepherd/backend/store"
	"shepherd/internal/testutil"
)

// fakeDisk plays the data folder's file system: its free space, and
// whether writes fail for lack of it.
type fakeDisk struct {
	free atomic.Uint64
	full atomic.Bool
}

const fakeTotal = 100 << 30

func (d *fakeDisk) statFS(string) (uint64, uint64, error) { return d.free.Load(), fakeTotal, nil }

func (d *fakeDisk) fault(string) error {
	if d.full.Load() {
		return &os.PathError{Op: "write", Path: "record.json", Err: syscall.ENOSPC}
	}
	return nil
}

// diskHarness is a harness on a fake clock whose disk the test fills.
func diskHarness(t *testing.T) (*harness, *fakeDisk, interface{ Advance(time.Duration) }) {
	t.Helper()
	clk := newFakeClock()
	d := &fakeDisk{}
	d.free.Store(50 << 30)
	h := newHarness(t, func(c *Config) { c.Clock = clk; c.StatFS = d.statFS })
	h.e.st.InjectFault(d.fault)
	return h, d, clk
}

// A stop signals first and writes after: on a full disk it still ends the
// agent and answers, the state moves in memory, and the record is written
// once the disk takes it again (retried), never dropped.
func TestStopOnAFullDisk(t *testing.T) {
	h, d, clk := diskHarness(t)
	h.create(withID("busy", sh("exec sleep 300")))
	r := h.start("busy")
	pid := r.PID
	d.full.Store(true)
	d.free.Store(0)
	r, err := h.e.StopAgent(context.Background(), h.project.ID, "busy", nil)
	if err != nil {
		t.Fatalf("stop on a full disk: %v", err)
	}
	if r.Status != lifecycle.Stopped || r.ExitReason != lifecycle.ReasonStoppedByUser {
		t.Fatalf("after the stop: %s %s", r.Status, r.ExitReason)
	}
	if procid.GroupExists(pid) {
		t.Fatal("the agent's group is still there")
	}
	if disk := h.diskRecord("busy"); disk.Status != lifecycle.Running {
		t.Fatalf("the disk took the record although it is full: %s", disk.Status)
	}
	// The low-space alert: raised at the failed write, notified once.
	testutil.Eventually(t, "the low-space alert", func() bool { return len(h.e.Alerts()) == 1 })
	h.settle()
	if a := h.e.Alerts()[0]; a.Kind != AlertLowSpace || a.FreeBytes != 0 || !strings.Contains(a.Message, "nearly full") {
		t.Errorf("alert %+v", a)
	}
	if n := h.rec.notes(notify.KindDisk); len(n) != 1 {
		t.Errorf("notifications %+v, want one", n)
	}
	// Space returns: the next retry writes the record and clears the alert.
	d.full.Store(false)
	d.free.Store(50 << 30)
	clk.Advance(diskRetry)
	h.settle()
	if disk := h.diskRecord("busy"); disk.Status != lifecycle.Stopped || disk.Desired != lifecycle.DesiredStopped {
		t.Fatalf("the record was not written after all: %s desired %s", disk.Status, disk.Desired)
	}
	if len(h.e.Alerts()) != 0 {
		t.Errorf("the alert stays with space back: %+v", h.e.Alerts())
	}
	if n := h.rec.notes(notify.KindDisk); len(n) != 1 {
		t.Errorf("notifications %+v, want still one", n)
	}
	h.rec.mu.Lock()
	defer h.rec.mu.Unlock()
	alerts := 0
	for _, ev := range h.rec.events {
		if ev == EventEngineAlerts {
			alerts++
		}
	}
	if alerts != 2 {
		t.Errorf("%d engine:alerts pushed, want 2 (raised, cleared)", alerts)
	}
}

// Pause and stop-all work on a full disk too: the project's pause holds at
// once and its signal file is written when the disk takes it.
func TestPauseAndStopAllOnAFullDisk(t *testing.T) {
	h, d, clk := diskHarness(t)
	for _, id := range []string{"a", "b"} {
		h.create(withID(id, sh("exec sleep 300")))
		h.start(id)
	}
	d.full.Store(true)
	res, err := h.e.PauseProject(context.Background(), h.project.ID, "lunch", true)
	if err != nil {
		t.Fatalf("pause on a full disk: %v", err)
	}
	for _, r := range res {
		if r.Error != "" || r.Record == nil || r.Record.Status != lifecycle.Paused {
			t.Errorf("%s: %+v", r.AgentID, r)
		}
	}
	if v, _ := h.e.ProjectState(h.project.ID); !v.Paused || v.PauseNote != "lunch" {
		t.Fatalf("the project is not paused: %+v", v)
	}
	signal := h.e.pauseSignalPath(h.project.ID)
	if _, err := os.Stat(signal); err == nil {
		t.Fatal("the signal file was written on a full disk")
	}
	d.full.Store(false)
	clk.Advance(diskRetry)
	h.settle()
	if b, err := os.ReadFile(signal); err != nil || strings.TrimSpace(string(b)) != "lunch" {
		t.Fatalf("the signal file after the retry: %q %v", b, err)
	}
	if v, _ := h.e.ProjectState(h.project.ID); !v.Paused {
		t.Fatal("the engine's own write of the signal file unpaused it")
	}
	if err := h.e.UnpauseProject(context.Background(), h.project.ID); err != nil {
		t.Fatal(err)
	}
	h.waitStatus("a", lifecycle.Running)
	h.waitStatus("b", lifecycle.Running)
	d.full.Store(true)
	out, err := h.e.StopAll(context.Background(), h.project.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out {
		if r.Error != "" || r.Record.Status != lifecycle.Stopped || procid.GroupExists(r.Record.PID) {
			t.Errorf("stop-all on a full disk: %+v", r)
		}
	}
}

// The engine looks at its disk on its monitors' wakeups: under the
// threshold the alert is raised, over it (with a margin) cleared.
func TestLowSpaceOnWakeups(t *testing.T) {
	h, d, clk := diskHarness(t)
	if _, err := h.e.SelectProject(context.Background(), h.project.ID); err != nil {
		t.Fatal(err)
	}
	d.free.Store(100 << 20) // under 512 MiB
	clk.Advance(31 * time.Second)
	h.settle()
	if len(h.e.Alerts()) != 1 {
		t.Fatal("no alert under the threshold")
	}
	d.free.Store(520 << 20) // over the threshold, within the margin
	clk.Advance(diskRetry)
	h.settle()
	if len(h.e.Alerts()) != 1 {
		t.Fatal("the alert flapped off within its margin")
	}
	d.free.Store(1 << 30)
	clk.Advance(diskRetry)
	h.settle()
	if len(h.e.Alerts()) != 0 {
		t.Fatal("the alert stays with space back")
	}
}

// Hooks are rate-limited per agent on the engine's clock.
func TestHookRateLimit(t *testing.T) {
	h, _, clk := diskHarness(t)
	me, other := AgentRef{ProjectID: h.project.ID, AgentID: "a"}, AgentRef{ProjectID: h.project.ID, AgentID: "b"}
	for i := 0; i < HookBurst; i++ {
		if err := h.e.AllowHook(me); err != nil {
			t.Fatalf("hook %d refused: %v", i, err)
		}
	}
	wantKind(t, h.e.AllowHook(me), ErrTooMany, "posts hooks faster than")
	if err := h.e.AllowHook(other); err != nil {
		t.Fatalf("another agent's hooks: %v", err)
	}
	clk.Advance(time.Second)
	for i := 0; i < int(HookRate); i++ {
		if err := h.e.AllowHook(me); err != nil {
			t.Fatalf("after a second, hook %d: %v", i, err)
		}
	}
	wantKind(t, h.e.AllowHook(me), ErrTooMany, "posts hooks faster than")
}

// Logs are rotated by the project's settings: an agent that floods keeps
// within logMaxMiB × (logKeep+1), and its last line is read across files.
func TestLogRotationSettings(t *testing.T) {
	h := newHarness(t)
	s, _ := h.e.GetSettings(h.project.ID)
	if s.LogMaxMiB != DefaultLogMaxMiB || s.LogKeep != DefaultLogKeep {
		t.Fatalf("defaults %d %d", s.LogMaxMiB, s.LogKeep)
	}
	for _, bad := range []Settings{{LogMaxMiB: 0, LogKeep: 1}, {LogMaxMiB: 1, LogKeep: -1}, {LogMaxMiB: 1 << 20, LogKeep: 1}} {
		x := s
		x.LogMaxMiB, x.LogKeep = bad.LogMaxMiB, bad.LogKeep
		if _, err := h.e.PutSettings(h.project.ID, x); !errors.Is(err, ErrValidation) {
			t.Errorf("%d MiB, keep %d: %v", bad.LogMaxMiB, bad.LogKeep, err)
		}
	}
	s.LogMaxMiB, s.LogKeep = 1, 1
	if _, err := h.e.PutSettings(h.project.ID, s); err != nil {
		t.Fatal(err)
	}
	h.create(withID("flood", sh("head -c 3500000 /dev/zero | tr '\\0' x; echo; echo the end")))
	h.start("flood")
	r := h.waitStatus("flood", lifecycle.Completed)
	files, _ := filepath.Glob(r.LogPath + "*")
	var total int64
	for _, f := range files {
		fi, _ := os.Stat(f)
		total += fi.Size()
		if fi.Size() > 1<<20 {
			t.Errorf("%s: %d bytes, over 1 MiB", f, fi.Size())
		}
	}
	if total > 2<<20+4096 {
		t.Errorf("the log takes %d bytes, more than 2 MiB: %v", total, files)
	}
	if logtail.Size(r.LogPath) != 3500000+1+8 {
		t.Errorf("offsets count %d", logtail.Size(r.LogPath))
	}
	tail, err := h.e.LogTail(h.project.ID, "flood", 1)
	if err != nil || string(tail) != "the end\n" {
		t.Errorf("tail %q %v", tail, err)
	}
	// A Claude run whose result line comes after rotations is judged by it
	// (the scanner reads across files), and its run marker's offset counts
	// from the log's first byte ever.
	result := `{"type":"result","subtype":"success","is_error":false,"num_turns":2,"total_cost_usd":0.25,"session_id":"5e551011-0000-4000-8000-000000000001"}`
	h.create(AgentSpec{ID: "claude", Command: "/bin/sh", Profile: store.ProfileClaudeJSON, Args: []string{"-c",
		`echo '{"type":"system","subtype":"init","session_id":"5e551011-0000-4000-8000-000000000001"}'; head -c 2500000 /dev/zero | tr '\0' x; echo; echo '` + result + `'`}})
	for run := 1; run <= 2; run++ {
		h.start("claude")
		r = h.waitStatus("claude", lifecycle.Completed)
		if r.LastResult == nil || r.LastResult.CostUSD == nil || *r.LastResult.CostUSD != 0.25 || r.SessionID != "5e551011-0000-4000-8000-000000000001" {
			t.Fatalf("run %d: the result line after the rotations was not read: %+v session %q", run, r.LastResult, r.SessionID)
		}
	}
	evs, _ := h.e.Events(h.project.ID, "claude", 0)
	var offsets []float64
	for _, ev := range evs {
		if ev.Event == "transition" && ev.To == string(lifecycle.Running) {
			offsets = append(offsets, ev.Data["logOffset"].(float64))
		}
	}
	runLen := float64(len(`{"type":"system","subtype":"init","session_id":"5e551011-0000-4000-8000-000000000001"}`) + 1 + 2500000 + 1 + len(result) + 1)
	if len(offsets) != 2 || offsets[0] != 0 || offsets[1] != runLen {
		t.Errorf("run markers at %v, want [0 %v]", offsets, runLen)
	}
}

// A box's figures are claims: what an agent created by another agent
// reports counts against its creator's tree, never the project's cost of
// the day — it neither pauses the user's agents nor holds starts — and
// only the user answers its budget pause.
func TestChildFiguresAreClaims(t *testing.T) {
	h := newClaudeHarness(t)
	setDaily(t, h, 1)
	h.create(withID("users", sh("exec sleep 300")))
	h.start("users")
	h.create(withID("boss", sh("exec sleep 300")))
	h.create(AgentSpec{ID: "liar", Parent: "boss", Command: fakeClaude, Cwd: h.cwd, Profile: store.ProfileClaudeJSON,
		Args: []string{"-p", "--verbose", "--output-format", "stream-json", "lie"},
		Env:  map[string]string{"FAKE_CLAUDE_MODE": "success", "FAKE_CLAUDE_COST": "999999", "FAKE_CLAUDE_RECORD": h.record}, GraceSec: 1})
	h.start("liar")
	h.waitStatusPolling("liar", lifecycle.Completed)
	h.settle()
	v, _ := h.e.ProjectState(h.project.ID)
	if v.CostToday != 0 || v.BudgetHeld || v.Totals != nil {
		t.Fatalf("the claim counted for the project: today %v held %v totals %+v", v.CostToday, v.BudgetHeld, v.Totals)
	}
	if v.ClaimedTotals == nil || v.ClaimedTotals.CostUSD == nil || *v.ClaimedTotals.CostUSD != 999999 {
		t.Fatalf("claimed totals %+v", v.ClaimedTotals)
	}
	if r := h.get("users"); r.Status != lifecycle.Running {
		t.Fatalf("the user's agent is %s", r.Status)
	}
	if b := h.get("boss"); b.TreeTotals == nil || *b.TreeTotals.CostUSD != 999999 {
		t.Fatalf("the creator's tree figures: %+v", b.TreeTotals)
	}
	h.create(withID("later", sh("exec sleep 300")))
	if r := h.start("later"); r.Status != lifecycle.Running {
		t.Fatalf("a start after the claim: %s", r.Status)
	}
	// A new engine counts the day again from the events: still not the claim.
	e2 := h.engine(func(c *Config) { c.Clock = h.clk })
	h.e.Close()
	if v, _ := e2.ProjectState(h.project.ID); v.CostToday != 0 {
		t.Fatalf("counted again from the events: %v", v.CostToday)
	}
}

func TestOnlyTheUserAnswersABudgetPause(t *testing.T) {
	h := newClaudeHarness(t)
	h.create(withID("boss", sh("exec sleep 300")))
	h.create(AgentSpec{ID: "kid", Parent: "boss", Command: fakeClaude, Cwd: h.cwd, Profile: store.ProfileClaudeJSON,
		Args:       []string{"-p", "--verbose", "--output-format", "stream-json", "spend"},
		ResumeArgs: []string{"-p", "--verbose", "--output-format", "stream-json", "--resume", "{sessionId}", "--", "continue"},
		Env: map[string]string{"FAKE_CLAUDE_MODE": "success", "FAKE_CLAUDE_RESUME_MODE": "success", "FAKE_CLAUDE_COST": "5.12",
			"FAKE_CLAUDE_RECORD": h.record}, GraceSec: 1, MaxBudgetUsd: 5})
	h.start("kid")
	r := h.waitStatusPolling("kid", lifecycle.Paused)
	if r.BudgetPause != BudgetRun {
		t.Fatalf("not budget-paused: %q", r.BudgetPause)
	}
	asBoss := AsAgent(context.Background(), AgentRef{ProjectID: h.project.ID, AgentID: "boss"})
	_, err := h.e.UnpauseAgent(asBoss, h.project.ID, "kid")
	wantKind(t, err, ErrPermissionDenied, "only the user answers a budget pause")
	_, err = h.e.StartAgent(asBoss, h.project.ID, "kid")
	wantKind(t, err, ErrPermissionDenied, "cannot start 'kid'")
	_, err = h.e.ResumeAgent(asBoss, h.project.ID, "kid")
	wantKind(t, err, ErrPermissionDenied, "cannot resume 'kid'")
	if r := h.get("kid"); r.Status != lifecycle.Paused || r.BudgetPause != BudgetRun {
		t.Fatalf("after the refusals: %s %q", r.Status, r.BudgetPause)
	}
	if _, err := h.e.UnpauseAgent(context.Background(), h.project.ID, "kid"); err != nil {
		t.Fatalf("the user's unpause: %v", err)
	}
}

// A request is checked whole before anything is made for it: the folder an
// agent names for its CLI's state (CLAUDE_CONFIG_DIR, CODEX_HOME) is made
// only for a request that passes — never for one refused for its grants,
// its caller's holds, Shepherd's own folders, or a live agent's edit.
func TestRefusedRequestMakesNoFolder(t *testing.T) {
	h := newHarness(t)
	h.create(AgentSpec{ID: "parent", Command: "/bin/true"}) // holds the network and its cwd (the project folder)
	caller := &AgentRef{ProjectID: h.project.ID, AgentID: "parent"}
	outside := filepath.Join(t.TempDir(), "not", "yet")
	claude := func(id, dir string) AgentSpec {
		return AgentSpec{ID: id, Command: "/bin/true", Profile: store.ProfileClaudeJSON, Caller: caller,
			Env: map[string]string{"CLAUDE_CONFIG_DIR": dir}}
	}
	_, err := h.e.CreateAgent(h.project.ID, claude("far", outside))
	wantKind(t, err, ErrPermissionDenied, "cannot grant @write:"+outside)
	if _, err := os.Stat(filepath.Dir(outside)); !os.IsNotExist(err) {
		t.Fatalf("a refused create made %s", filepath.Dir(outside))
	}
	private := filepath.Join(h.data, "claude-here")
	spec := claude("inside", private)
	spec.Caller = nil // the user: holds everything, but not Shepherd's own folders
	spec.Permissions = perms()
	_, err = h.e.CreateAgent(h.project.ID, spec)
	wantKind(t, err, ErrValidation, "Shepherd's own folder")
	if _, err := os.Stat(private); !os.IsNotExist(err) {
		t.Fatal("a refused create made a folder in Shepherd's data folder")
	}
	h.create(withID("taken", sh("exec sleep 300")))
	_, err = h.e.CreateAgent(h.project.ID, claude("taken", filepath.Join(h.project.Path, "dup")))
	wantKind(t, err, ErrAlreadyExists, "already exists")
	if _, err := os.Stat(filepath.Join(h.project.Path, "dup")); !os.IsNotExist(err) {
		t.Fatal("a create refused for its id made the folder")
	}
	// A request that passes gets its folder, granted.
	mine := filepath.Join(h.project.Path, "state", "claude")
	r, err := h.e.CreateAgent(h.project.ID, claude("near", mine))
	if err != nil || r.Sandbox == nil || !slices.Contains(r.Sandbox.WriteDirs, mine) {
		t.Fatalf("within the caller's holds: %+v %v", r, err)
	}
	// An edit of a live agent is refused before anything is made.
	h.start("taken")
	edit := filepath.Join(h.project.Path, "edit")
	_, err = h.e.UpdateAgent(h.project.ID, AgentSpec{ID: "taken", Command: "/bin/sh", Profile: store.ProfileClaudeJSON, Permissions: perms(),
		Env: map[string]string{"CLAUDE_CONFIG_DIR": edit}})
	wantKind(t, err, ErrIsRunning, "Stop it before editing")
	if _, err := os.Stat(edit); !os.IsNotExist(err) {
		t.Fatal("a refused edit made the folder")
	}
}

// The engine's watch of a log goes on across its rotation: a line written
// after agent.log was rotated is seen at once (no poll runs: the clock
// stands still).
func TestWatchFilesAcrossRotation(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, func(c *Config) { c.Clock = clk; c.WatchFiles = true })
	s, _ := h.e.GetSettings(h.project.ID)
	s.LogMaxMiB, s.LogKeep = 1, 1
	if _, err := h.e.PutSettings(h.project.ID, s); err != nil {
		t.Fatal(err)
	}
	goFile := filepath.Join(t.TempDir(), "go")
	h.create(withID("a", sh("head -c 1500000 /dev/zero | tr '\\0' x; echo; while [ ! -e "+goFile+" ]; do sleep 0.02; done; echo after; exec sleep 300")))
	r := h.start("a")
	testutil.Eventually(t, "the rotation", func() bool {
		_, err := os.Stat(logtail.Rotated(r.LogPath, 1))
		return err == nil && logtail.Size(r.LogPath) == 1500001
	})
	clk.Advance(5 * time.Second)
	at := clk.Now().UTC()
	if err := os.WriteFile(goFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the line after the rotation to be seen", func() bool {
		act := h.get("a").Activity
		return act != nil && act.Since != nil && act.Since.Equal(at)
	})
}
