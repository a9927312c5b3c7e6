package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/procid"
	"shepherd/backend/store"
	"shepherd/internal/testutil"
)

func (h *claudeHarness) fakeClaude(id, mode string, env map[string]string) {
	h.t.Helper()
	e := map[string]string{"FAKE_CLAUDE_MODE": mode, "FAKE_CLAUDE_RESUME_MODE": "silent", "FAKE_CLAUDE_RECORD": h.record}
	for k, v := range env {
		e[k] = v
	}
	h.create(AgentSpec{ID: id, Command: fakeClaude, Cwd: h.cwd, Profile: store.ProfileClaudeJSON,
		Args:       []string{"-p", "--verbose", "--output-format", "stream-json", "work on " + id},
		ResumeArgs: []string{"-p", "--verbose", "--output-format", "stream-json", "--resume", "{sessionId}", "--", "continue"},
		Env:        e, GraceSec: 2})
	h.start(id)
}

func (h *claudeHarness) log(id string) string {
	b, _ := os.ReadFile(h.get(id).LogPath)
	return string(b)
}

// Pausing a project lets a tool call in flight finish (its result stays in
// the session), then pauses every agent — groups gone, session ids kept.
// Unpausing resumes the resumable ones with their session, in their cwd, and
// starts the others.
func TestPauseProjectAtSafePoint(t *testing.T) {
	h := newClaudeHarness(t)
	h.fakeClaude("tool", "tool", map[string]string{"FAKE_CLAUDE_TOOL_SECONDS": "2", "FAKE_CLAUDE_AFTER_TOOL": "hang"})
	testutil.Eventually(t, "the tool call in flight", func() bool {
		h.e.PollLogsNow()
		return strings.Contains(h.log("tool"), "task_started")
	})
	h.fakeClaude("quiet", "silent", nil)
	h.create(withID("plain", sh("echo plain; exec sleep 300")))
	before := map[string]*store.Record{"plain": h.start("plain")}
	for _, id := range []string{"tool", "quiet"} {
		testutil.Eventually(t, id+" session", func() bool { h.e.PollLogsNow(); return h.get(id).SessionID != "" })
		before[id] = h.get(id)
	}
	if _, err := h.e.PauseProject(context.Background(), h.project.ID, "closing the lid", false); err != nil {
		t.Fatal(err)
	}
	for id, b := range before {
		r := h.get(id)
		if r.Status != lifecycle.Paused || r.ExitReason != lifecycle.ReasonPaused || r.PausedAt == nil ||
			r.SessionID != b.SessionID || r.PauseNote != "closing the lid" || !r.PausedWithProject {
			t.Fatalf("%s after pause: %s %s paused %v session %q (was %q) note %q", id, r.Status, r.ExitReason, r.PausedAt, r.SessionID, b.SessionID, r.PauseNote)
		}
		if procid.GroupAlive(b.PID) {
			t.Fatalf("%s: group %d alive after pause", id, b.PID)
		}
	}
	if !strings.Contains(h.log("tool"), `"tool_result"`) {
		t.Fatal("paused before its tool call finished")
	}
	if !strings.Contains(h.events(), `"event":"pause:safe-point"`) {
		t.Fatal("no safe-point wait recorded")
	}
	v, _ := h.e.ProjectState(h.project.ID)
	if !v.Paused || v.PauseNote != "closing the lid" {
		t.Fatalf("project view %+v", v)
	}
	// A paused project starts nothing: a start waits in the queue.
	h.create(withID("later", sh("exec sleep 300")))
	if r := h.start("later"); r.Status != lifecycle.Queued || r.QueuePosition != 1 {
		t.Fatalf("start while paused: %s position %d", r.Status, r.QueuePosition)
	}

	if err := h.e.UnpauseProject(context.Background(), h.project.ID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"tool", "quiet", "plain", "later"} {
		r := h.waitStatus(id, lifecycle.Running)
		want := 1
		if id == "later" {
			want = 0
		}
		if r.ResumeCount != want || r.AutoResumeCount != 0 || r.PausedAt != nil {
			t.Fatalf("%s after unpause: resumeCount %d autoResumeCount %d pausedAt %v", id, r.ResumeCount, r.AutoResumeCount, r.PausedAt)
		}
	}
	testutil.Eventually(t, "the resumed runs", func() bool { return len(h.invocations()) == 4 })
	resumed := map[string]bool{}
	for _, inv := range h.invocations()[2:] {
		if inv.Cwd != h.cwd {
			t.Fatalf("resumed in %s, not its cwd", inv.Cwd)
		}
		resumed[inv.Resume] = true
	}
	if !resumed[before["tool"].SessionID] || !resumed[before["quiet"].SessionID] {
		t.Fatalf("resumed sessions %v, want %s and %s", resumed, before["tool"].SessionID, before["quiet"].SessionID)
	}
	testutil.Eventually(t, "the plain agent started again with its args", func() bool {
		return strings.Count(h.log("plain"), "plain") == 2
	})
}

// maxRunning caps the live agents: the rest wait in order and start as
// slots free up; a stop takes one out of the queue; the queue survives an
// engine restart in order.
func TestRunQueue(t *testing.T) {
	h := newClaudeHarness(t)
	s, _ := h.e.GetSettings(h.project.ID)
	s.MaxRunning = 2
	if _, err := h.e.PutSettings(h.project.ID, s); err != nil {
		t.Fatal(err)
	}
	ids := []string{"a", "b", "c", "d", "e", "f"}
	mark := func(id string) string { return filepath.Join(h.project.Path, "done-"+id) }
	for _, id := range ids {
		h.create(withID(id, sh(`while [ ! -e `+mark(id)+` ]; do sleep 0.02; done`)))
	}
	for i, id := range ids[:5] {
		r := h.start(id)
		switch {
		case i < 2 && r.Status != lifecycle.Running:
			t.Fatalf("%s: %s, want running", id, r.Status)
		case i >= 2 && (r.Status != lifecycle.Queued || r.QueuePosition != i-1):
			t.Fatalf("%s: %s position %d, want queued %d", id, r.Status, r.QueuePosition, i-1)
		}
	}
	liveCount := func() int {
		n := 0
		for _, r := range h.e.records(h.projectPtr()) {
			if r.Status.Live() {
				n++
			}
		}
		return n
	}
	// A stop takes e out of the queue, back to where it was.
	if r, err := h.e.StopAgent(context.Background(), h.project.ID, "e", nil); err != nil || r.Status != lifecycle.NotStarted {
		t.Fatalf("stop of a queued agent: %v %+v", err, r)
	}
	// a ends: c takes its slot; d moves up.
	writeFile(t, mark("a"))
	h.waitStatus("c", lifecycle.Running)
	if r := h.get("d"); r.QueuePosition != 1 || liveCount() != 2 {
		t.Fatalf("d at %d, %d live", r.QueuePosition, liveCount())
	}
	h.start("f") // queued behind d
	// The engine goes away with d and f queued; the next one keeps the order.
	h.e.Close()
	h.e = h.engine(func(c *Config) { c.Clock = h.clk })
	if _, err := h.e.SelectProject(context.Background(), h.project.ID); err != nil {
		t.Fatal(err)
	}
	if d, f := h.get("d"), h.get("f"); d.QueuePosition != 1 || f.QueuePosition != 2 {
		t.Fatalf("after restart: d %s %d, f %s %d", d.Status, d.QueuePosition, f.Status, f.QueuePosition)
	}
	writeFile(t, mark("b"))
	h.waitStatus("d", lifecycle.Running)
	writeFile(t, mark("c"))
	h.waitStatus("f", lifecycle.Running)
	if n := liveCount(); n != 2 {
		t.Fatalf("%d live, want 2", n)
	}
	if !strings.Contains(h.events(), `"to":"queued","reason":"queued: start"`) {
		t.Fatal("no queued transition in events.jsonl")
	}
}

func (h *harness) projectPtr() *project {
	p, err := h.e.project(h.project.ID)
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

// A pause while agents are queued holds the queue; the unpause releases it
// in order, the paused agent behind the ones that were waiting.
func TestPauseHoldsQueue(t *testing.T) {
	h := newClaudeHarness(t)
	s, _ := h.e.GetSettings(h.project.ID)
	s.MaxRunning = 1
	h.e.PutSettings(h.project.ID, s)
	for _, id := range []string{"a", "b", "c"} {
		h.create(withID(id, sh("exec sleep 300")))
		h.start(id)
	}
	if _, err := h.e.PauseProject(context.Background(), h.project.ID, "", true); err != nil {
		t.Fatal(err)
	}
	if a, b, c := h.get("a"), h.get("b"), h.get("c"); a.Status != lifecycle.Paused || b.QueuePosition != 1 || c.QueuePosition != 2 {
		t.Fatalf("paused: a %s, b %s %d, c %s %d", a.Status, b.Status, b.QueuePosition, c.Status, c.QueuePosition)
	}
	if err := h.e.UnpauseProject(context.Background(), h.project.ID); err != nil {
		t.Fatal(err)
	}
	h.waitStatus("b", lifecycle.Running)
	if c, a := h.get("c"), h.get("a"); c.QueuePosition != 1 || a.Status != lifecycle.Queued || a.QueuePosition != 2 {
		t.Fatalf("after unpause: c %s %d, a %s %d", c.Status, c.QueuePosition, a.Status, a.QueuePosition)
	}
}

// One agent: pause (queued or running), unpause; the errors of seed 002.
func TestPauseAgentAndErrors(t *testing.T) {
	h := newClaudeHarness(t)
	h.create(withID("a", sh("echo run; exec sleep 300")))
	_, err := h.e.PauseAgent(context.Background(), h.project.ID, "a", false, "")
	wantKind(t, err, ErrNotRunning, "is not running")
	_, err = h.e.UnpauseAgent(context.Background(), h.project.ID, "a")
	wantKind(t, err, ErrNotPaused, "is not paused")
	h.start("a")
	r, err := h.e.PauseAgent(context.Background(), h.project.ID, "a", true, "rate limit")
	if err != nil || r.Status != lifecycle.Paused || r.PauseNote != "rate limit" || r.PausedWithProject {
		t.Fatalf("pause: %v %+v", err, r)
	}
	_, err = h.e.PauseAgent(context.Background(), h.project.ID, "a", false, "")
	wantKind(t, err, ErrNotRunning, "already paused")
	// Not resumable (no resume args): started again with its args.
	if r, err := h.e.UnpauseAgent(context.Background(), h.project.ID, "a"); err != nil || r.Status != lifecycle.Running || r.ResumeCount != 1 {
		t.Fatalf("unpause: %v %+v", err, r)
	}
	bad := DefaultSettings()
	bad.SafePointWaitSec = -1
	_, err = h.e.PutSettings(h.project.ID, bad)
	wantKind(t, err, ErrValidation, "safePointWaitSec")
}

// Paused longer than pausedExpiryDays: failed/expired, its session kept.
func TestPausedExpiry(t *testing.T) {
	h := newClaudeHarness(t)
	h.fakeClaude("a", "silent", nil)
	h.waitSession("a", sess(1))
	if _, err := h.e.PauseAgent(context.Background(), h.project.ID, "a", true, ""); err != nil {
		t.Fatal(err)
	}
	h.settle()
	h.clk.Advance(31 * 24 * time.Hour)
	h.settle()
	r := h.get("a")
	if r.Status != lifecycle.Failed || r.ExitReason != lifecycle.ReasonExpired || r.SessionID != sess(1) {
		t.Fatalf("after 31 days: %s %s session %q", r.Status, r.ExitReason, r.SessionID)
	}
	if _, err := os.Stat(r.LogPath); err != nil {
		t.Fatalf("log: %v", err)
	}
}

// The seed's signal file: created, the project pauses (its text is the
// note); removed, it resumes — noticed by the pause watcher's look every
// second (how soon is bench/'s to measure, not this test's).
func TestPauseSignalFile(t *testing.T) {
	h := newHarness(t)
	h.create(withID("a", sh("echo run; exec sleep 300")))
	h.start("a")
	sig := filepath.Join(h.e.Store().ProjectDir(h.project.ID), "pause_signal")
	if err := os.WriteFile(sig, []byte("lunch break\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := h.waitStatus("a", lifecycle.Paused)
	if r.PauseNote != "lunch break" {
		t.Fatalf("note %q", r.PauseNote)
	}
	if v, _ := h.e.ProjectState(h.project.ID); !v.Paused || v.PauseNote != "lunch break" {
		t.Fatalf("view %+v", v)
	}
	os.Remove(sig)
	h.waitStatus("a", lifecycle.Running)

	// A folder in its place: paused all the same, reported once.
	if err := os.Mkdir(sig, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(sig, "x")) // not empty: it cannot simply be removed
	h.waitStatus("a", lifecycle.Paused)
	if v, _ := h.e.ProjectState(h.project.ID); !v.Paused || !strings.Contains(v.PauseProblem, "not a regular file") {
		t.Fatalf("view with a folder: %+v", v)
	}
	err := h.e.UnpauseProject(context.Background(), h.project.ID)
	wantKind(t, err, ErrValidation, "remove it by hand")
	os.RemoveAll(sig)
	h.waitStatus("a", lifecycle.Running)
}

// A project whose folder vanishes while it is watched is flagged, not
// dropped: its agents go on being supervised.
func TestProjectFolderVanishes(t *testing.T) {
	h := newHarness(t)
	h.create(withID("a", sh("exec sleep 300")))
	r := h.start("a")
	if err := os.RemoveAll(h.project.Path); err != nil {
		t.Fatal(err)
	}
	v, err := h.e.ProjectState(h.project.ID)
	if err != nil || !strings.Contains(v.FolderMissing, "does not exist") {
		t.Fatalf("view: %+v %v", v, err)
	}
	if err := h.e.WatchdogNow(h.project.ID); err != nil {
		t.Fatal(err)
	}
	if got := h.get("a"); got.Status != lifecycle.Running || got.PID != r.PID {
		t.Fatalf("agent after its folder vanished: %s", got.Status)
	}
	if _, err := h.e.StopAgent(context.Background(), h.project.ID, "a", nil); err != nil {
		t.Fatal(err)
	}
	if len(h.e.ProjectViews()) != 1 {
		t.Fatal("the project was dropped")
	}
}

// An agent that exits leaving a process in its group keeps its slot until
// its shim has stopped that process: the next queued agent does not start
// beside it.
func TestQueueSlotHeldWhileLeftoversAreStopped(t *testing.T) {
	h := newHarness(t)
	s, _ := h.e.GetSettings(h.project.ID)
	s.MaxRunning = 1
	if _, err := h.e.PutSettings(h.project.ID, s); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "leftover")
	h.create(AgentSpec{ID: "leaver", Command: "/bin/sh", GraceSec: 1,
		Args: []string{"-c", `sh -c 'trap "" TERM; echo $$ > ` + pidFile + `; while :; do sleep 0.05; done' & while [ ! -s ` + pidFile + ` ]; do sleep 0.01; done; exit 0`}})
	h.create(AgentSpec{ID: "next", Command: "/bin/sh", Args: []string{"-c", "sleep 30"}, GraceSec: 1})
	h.start("leaver")
	if r := h.start("next"); r.Status != lifecycle.Queued {
		t.Fatalf("next: %s, want queued", r.Status)
	}
	h.waitStatus("leaver", lifecycle.Completed)
	b, _ := os.ReadFile(pidFile)
	leftover, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if leftover <= 0 {
		t.Fatalf("pid file %q", b)
	}
	h.waitStatus("next", lifecycle.Running)
	if procid.Alive(leftover) {
		t.Fatal("the next agent started while the last one's leftover still ran: two agents over a cap of 1")
	}
}
