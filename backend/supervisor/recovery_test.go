package supervisor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"shepherd/backend/lifecycle"
	"shepherd/backend/notify"
	"shepherd/backend/procid"
	"shepherd/backend/store"
	"shepherd/internal/testutil"
)

// claudeHarness is an engine on a fake clock with the project selected (so
// its watchdog and stale tickers run on that clock) and short settings.
type claudeHarness struct {
	*harness
	clk    *clockwork.FakeClock
	record string // the fake CLI's record of its invocations
	cwd    string // the agent's own folder, not the project's
}

func newClaudeHarness(t *testing.T) *claudeHarness {
	clk := newFakeClock()
	h := &claudeHarness{harness: newHarness(t, func(c *Config) { c.Clock = clk }), clk: clk}
	h.record = filepath.Join(t.TempDir(), "invocations.jsonl")
	h.cwd = filepath.Join(h.project.Path, "work")
	os.Mkdir(h.cwd, 0o700)
	s := DefaultSettings()
	s.StaleCheckIntervalSec, s.StaleThresholdSec, s.ResultGraceSec = 1, 10, 5
	if _, err := h.e.PutSettings(h.project.ID, s); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.SelectProject(context.Background(), h.project.ID); err != nil {
		t.Fatal(err)
	}
	return h
}

// claude creates and starts a fake Claude agent in mode (resumed runs in
// resumeMode).
func (h *claudeHarness) claude(id, mode, resumeMode string) *store.Record {
	h.t.Helper()
	h.create(AgentSpec{ID: id, Command: fakeClaude, Cwd: h.cwd, Profile: store.ProfileClaudeJSON,
		Args:       []string{"-p", "--verbose", "--output-format", "stream-json", "fix it"},
		ResumeArgs: []string{"-p", "--verbose", "--output-format", "stream-json", "--resume", "{sessionId}", "--", "continue"},
		Env:        map[string]string{"FAKE_CLAUDE_MODE": mode, "FAKE_CLAUDE_RESUME_MODE": resumeMode, "FAKE_CLAUDE_RECORD": h.record},
		GraceSec:   1})
	return h.start(id)
}

type invocation struct {
	Args   []string `json:"args"`
	Cwd    string   `json:"cwd"`
	Resume string   `json:"resume"`
	PID    int      `json:"pid"`
}

func (h *claudeHarness) invocations() []invocation {
	f, err := os.Open(h.record)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []invocation
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var inv invocation
		json.Unmarshal(sc.Bytes(), &inv)
		out = append(out, inv)
	}
	return out
}

// waitSession waits until the engine has read the run's session id from
// the log while it runs.
// sess is the session id the fake Claude's nth run reports.
func sess(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

func (h *claudeHarness) waitSession(id, want string) {
	h.t.Helper()
	testutil.Eventually(h.t, "session id "+want, func() bool {
		h.e.PollLogsNow() // the poller runs on the fake clock
		return h.get(id).SessionID == want
	})
	// Every line the run writes before it goes quiet is written and read: a line read only after the clock
	// moves would stamp activity then, and the run would not look silent.
	testutil.Eventually(h.t, id+"'s log written and read to its end", func() bool {
		h.e.PollLogsNow()
		b, _ := os.ReadFile(h.get(id).LogPath)
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		last := lines[len(lines)-1]
		// The fixtures' last line before they go quiet: Claude's assistant
		// line, Codex's turn.started.
		if !strings.Contains(last, `"type":"assistant"`) && !strings.Contains(last, `"type":"turn.started"`) {
			return false
		}
		_, a, err := h.e.agent(h.project.ID, id)
		if err != nil {
			return false
		}
		a.mu.Lock()
		rn := a.run
		a.mu.Unlock()
		if rn == nil {
			return false
		}
		rn.scanMu.Lock()
		defer rn.scanMu.Unlock()
		return rn.logSize == int64(len(b)) && rn.logOff == int64(len(b))
	})
	// The fake clock will say it is silent; let it really be (a process
	// that has just started uses CPU, which the busy rule would see).
	pid := h.get(id).PID
	testutil.Eventually(h.t, id+" idle", func() bool {
		u1, err := procid.TreeUsage(pid)
		if err != nil {
			return true
		}
		time.Sleep(100 * time.Millisecond)
		u2, err := procid.TreeUsage(pid)
		return err != nil || u2.CPU-u1.CPU < time.Millisecond
	})
}

// waitAgent waits until ok(record) holds, and on failure says what the
// agent was doing and what its project's events say.
func (h *claudeHarness) waitAgent(id, what string, ok func(*store.Record) bool) {
	h.t.Helper()
	deadline := time.Now().Add(testutil.Patience)
	for !ok(h.get(id)) {
		if time.Now().After(deadline) {
			r := h.get(id)
			h.t.Fatalf("%s: not within %s: status %s autoResume %d runs %d activity %+v stale %v error %q\nevents:\n%s",
				what, testutil.Patience, r.Status, r.AutoResumeCount, len(h.invocations()), r.Activity, r.Stale, r.Error, h.events())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// goStale moves the fake clock past the stale threshold, one tick at a time
// of the stale check.
func (h *claudeHarness) goStale() {
	h.settle() // passes under way have re-armed their timers
	h.clk.Advance(11 * time.Second)
	h.settle()
}

// (a) A success result line: completed, judged by the result line; the
// session id was captured while the agent ran.
func TestClaudeSuccess(t *testing.T) {
	h := newClaudeHarness(t)
	h.claude("a", "success", "")
	r := h.waitStatus("a", lifecycle.Completed)
	if r.SessionID != sess(1) || r.ExitReason != lifecycle.ReasonCompleted {
		t.Fatalf("session %q reason %s", r.SessionID, r.ExitReason)
	}
	if len(h.rec.notes(notify.KindFailed)) != 0 {
		t.Fatal("a success notified a failure")
	}
}

// (b) An error result line: failed, with the failure notification of seed 004.
func TestClaudeErrorResult(t *testing.T) {
	h := newClaudeHarness(t)
	h.claude("a", "error", "")
	r := h.waitStatus("a", lifecycle.Failed)
	if r.Error != "Claude reported error_during_execution" {
		t.Fatalf("error %q", r.Error)
	}
	testutil.Eventually(t, "failure notification", func() bool { return len(h.rec.notes(notify.KindFailed)) == 1 })
	n := h.rec.notes(notify.KindFailed)[0]
	if n.MessageJA != "Agent終了処理でエラーが発生しました: a" || n.AgentID != "a" || n.Level != notify.Error {
		t.Fatalf("notification %+v", n)
	}
}

// (c) Silent without a result: stale → SIGKILLed and resumed with its
// session id, in its own cwd; autoResumeCount 1.
func TestClaudeSilentIsKilledAndResumed(t *testing.T) {
	h := newClaudeHarness(t)
	first := h.claude("a", "silent", "success")
	h.waitSession("a", sess(1))
	h.goStale()
	r := h.waitStatus("a", lifecycle.Completed)
	if procid.Alive(first.PID) {
		t.Fatal("the hung process was not killed")
	}
	inv := h.invocations()
	if len(inv) != 2 {
		t.Fatalf("%d invocations, want 2: %+v", len(inv), inv)
	}
	if inv[1].Resume != sess(1) || inv[1].Cwd != h.cwd || inv[1].Args[len(inv[1].Args)-1] != "continue" {
		t.Fatalf("resumed as %+v, want --resume %s in %s", inv[1], sess(1), h.cwd)
	}
	if r.AutoResumeCount != 1 || r.ResumeCount != 1 || r.SessionID != sess(2) {
		t.Fatalf("autoResume %d resume %d session %q", r.AutoResumeCount, r.ResumeCount, r.SessionID)
	}
	ev := h.events()
	if !strings.Contains(ev, `"found":"stale"`) || !strings.Contains(ev, `"action":"resume"`) || !strings.Contains(ev, `"exitReason":"stale"`) {
		t.Fatalf("events lack the stale recovery:\n%s", ev)
	}
	// A fresh start resets the count.
	h.start("a")
	if r := h.get("a"); r.AutoResumeCount != 0 {
		t.Fatalf("fresh start kept autoResumeCount %d", r.AutoResumeCount)
	}
}

// (d) Keeps going silent: resumed 3 times, then failed/resume_limit with a
// notification, and nothing of it left running.
func TestClaudeResumeLimit(t *testing.T) {
	h := newClaudeHarness(t)
	h.claude("a", "silent", "silent")
	for i := 1; i <= 4; i++ {
		h.waitSession("a", sess(i))
		h.goStale()
		if i <= 3 {
			h.waitAgent("a", "resume", func(r *store.Record) bool {
				return r.AutoResumeCount == i && r.Status == lifecycle.Running
			})
		}
	}
	r := h.waitStatus("a", lifecycle.Failed)
	if r.ExitReason != lifecycle.ReasonResumeLimit || r.AutoResumeCount != 3 {
		t.Fatalf("reason %s autoResume %d", r.ExitReason, r.AutoResumeCount)
	}
	if n := len(h.invocations()); n != 4 {
		t.Fatalf("%d runs, want 4 (the first and 3 resumes)", n)
	}
	for _, inv := range h.invocations() {
		if procid.Alive(inv.PID) {
			t.Fatalf("run %d still alive", inv.PID)
		}
	}
	testutil.Eventually(t, "limit notification", func() bool { return len(h.rec.notes(notify.KindResumeLimit)) == 1 })
	if n := h.rec.notes(notify.KindResumeLimit)[0]; n.MessageJA != "自動回復の試行回数上限に達しました: a" {
		t.Fatalf("notification %+v", n)
	}
}

// (e) A result line, then the CLI stays alive: stopped after the result
// grace and recorded by the result line.
func TestClaudeHangsAfterResult(t *testing.T) {
	h := newClaudeHarness(t)
	first := h.claude("a", "hang-after-result", "")
	testutil.Eventually(t, "result grace armed", func() bool {
		h.clk.Advance(time.Second) // the grace is 5 s of the fake clock
		return h.get("a").Status != lifecycle.Running
	})
	r := h.waitStatus("a", lifecycle.Completed)
	if procid.Alive(first.PID) || r.Signal != "SIGTERM" {
		t.Fatalf("alive=%v signal %q", procid.Alive(first.PID), r.Signal)
	}
	if !strings.Contains(h.events(), `"event":"result-grace:stop"`) {
		t.Fatal("no result-grace event")
	}
}

// Silence for any command: a plain command silent past the threshold with
// no CPU use is flagged stale (Needs you, one notification) and left
// running — never killed for being quiet; staleCheck=false opts out.
func TestAnySilentCommandIsFlagged(t *testing.T) {
	h := newClaudeHarness(t)
	off := false
	h.create(AgentSpec{ID: "server", Command: "/bin/sh", Args: []string{"-c", "exec sleep 300"}, StaleCheck: &off})
	h.create(withID("hung", sh("exec sleep 100000")))
	h.start("server")
	h.start("hung")
	h.goStale()
	testutil.Eventually(t, "stale notice", func() bool { return len(h.rec.notes(notify.KindStale)) == 1 })
	if n := h.rec.notes(notify.KindStale)[0]; n.AgentID != "hung" || !strings.Contains(n.Message, "silent for") || !strings.Contains(n.Message, "left running (onStale: flag)") {
		t.Fatalf("notice %+v", n)
	}
	if r := h.get("hung"); !r.Stale || r.Status != lifecycle.Running || r.Attention != "silent, left running" {
		t.Fatalf("hung: stale=%v %s %q", r.Stale, r.Status, r.Attention)
	}
	if r := h.get("server"); r.Stale || r.Status != lifecycle.Running {
		t.Fatalf("server: stale=%v %s", r.Stale, r.Status)
	}
	// Notified once only.
	h.goStale()
	h.settle()
	if n := len(h.rec.notes(notify.KindStale)); n != 1 {
		t.Fatalf("%d stale notices", n)
	}
	// Acknowledged: out of Needs you, still stale and running.
	r, err := h.e.AckAgent(h.project.ID, "hung")
	if err != nil || r.Attention != "" || !r.Stale || r.Status != lifecycle.Running {
		t.Fatalf("ack: %v %+v", err, r)
	}
}

// onStale=restart: the silent command is killed and started again with its
// own arguments.
func TestOnStaleRestart(t *testing.T) {
	h := newClaudeHarness(t)
	h.create(AgentSpec{ID: "r", Command: "/bin/sh", Args: []string{"-c", "exec sleep 100000"}, OnStale: store.OnStaleRestart})
	first := h.start("r")
	h.goStale()
	testutil.Eventually(t, "restarted", func() bool {
		r := h.get("r")
		return r.Status == lifecycle.Running && r.PID != first.PID && r.RestartCount == 1
	})
	if procid.Alive(first.PID) {
		t.Fatal("the silent process was left running")
	}
	if _, err := h.e.CreateAgent(h.project.ID, AgentSpec{ID: "bad", Command: "true", OnStale: "kill"}); !errors.Is(err, ErrValidation) || !strings.Contains(err.Error(), `onStale "kill"`) {
		t.Fatalf("bad onStale: %v", err)
	}
}

// The silence clock survives an engine restart: an agent silent for most of
// the threshold before the restart is stale soon after it, not a full
// threshold later.
func TestSilenceClockSurvivesRestart(t *testing.T) {
	h := newClaudeHarness(t)
	h.create(withID("hung", sh("echo hi; exec sleep 100000")))
	h.start("hung")
	h.waitLog("hung", "hi")
	h.settle()
	h.clk.Advance(8 * time.Second) // 8 of the 10 s threshold
	h.settle()
	h.e.Close()
	e2 := h.engine(func(c *Config) { c.Clock = h.clk })
	h.e = e2
	if _, err := e2.SelectProject(context.Background(), h.project.ID); err != nil {
		t.Fatal(err)
	}
	h.settle()
	h.clk.Advance(3 * time.Second) // 11 s in all
	h.settle()
	testutil.Eventually(t, "stale after the restart", func() bool { return h.get("hung").Stale })
}

// Orphans: found at load after the engine was away; by the watchdog when
// layer 1 missed the exit; never handled twice.
func TestOrphanAtLoadResumes(t *testing.T) {
	h := newClaudeHarness(t)
	first := h.claude("a", "silent", "success")
	h.waitSession("a", sess(1))
	h.e.Close()
	// While no engine runs, the agent dies without an exit status (its
	// shim is killed first, so nothing records how it ended).
	syscall.Kill(first.ShimPID, syscall.SIGKILL)
	syscall.Kill(first.PID, syscall.SIGKILL)
	testutil.Eventually(t, "agent dead", func() bool { return !procid.Alive(first.PID) })

	h.e = h.engine(func(c *Config) { c.Clock = h.clk })
	sum, err := h.e.SelectProject(context.Background(), h.project.ID)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Counts[OutcomeUnknownExit] != 1 || sum.Counts["recovery_resume"] != 1 || sum.Agents[0].Recovery != "resume" {
		t.Fatalf("summary %+v", sum)
	}
	r := h.waitStatus("a", lifecycle.Completed)
	if r.AutoResumeCount != 1 {
		t.Fatalf("autoResumeCount %d", r.AutoResumeCount)
	}
	if inv := h.invocations(); len(inv) != 2 || inv[1].Resume != sess(1) {
		t.Fatalf("invocations %+v", inv)
	}
	// The watchdog, firing after the load-time check, finds nothing more.
	h.clk.Advance(30 * time.Second)
	h.settle()
	if n := strings.Count(h.events(), `"event":"recovery"`); n != 1 {
		t.Fatalf("%d recoveries, want 1", n)
	}
}

func TestSettingsValidationAndLiveChange(t *testing.T) {
	h := newClaudeHarness(t)
	bad := DefaultSettings()
	bad.WatchdogIntervalSec = 0
	_, err := h.e.PutSettings(h.project.ID, bad)
	wantKind(t, err, ErrValidation, "watchdogIntervalSec must be between 1")
	bad = DefaultSettings()
	bad.AutoResumeLimit = -1
	_, err = h.e.PutSettings(h.project.ID, bad)
	wantKind(t, err, ErrValidation, "autoResumeLimit")
	if s, _ := h.e.GetSettings(h.project.ID); s.StaleThresholdSec != 10 {
		t.Fatalf("a refused put changed the settings: %+v", s)
	}
	// A new threshold takes effect without a restart.
	s := DefaultSettings()
	s.StaleCheckIntervalSec, s.StaleThresholdSec = 1, 100
	if _, err := h.e.PutSettings(h.project.ID, s); err != nil {
		t.Fatal(err)
	}
	on := true
	h.create(AgentSpec{ID: "q", Command: "/bin/sh", Args: []string{"-c", "exec sleep 300"}, StaleCheck: &on})
	h.start("q")
	h.clk.Advance(11 * time.Second)
	h.settle()
	if len(h.rec.notes(notify.KindStale)) != 0 {
		t.Fatal("old threshold still used")
	}
	h.clk.Advance(90 * time.Second)
	testutil.Eventually(t, "stale at the new threshold", func() bool { return len(h.rec.notes(notify.KindStale)) == 1 })
	// Settings persist.
	e2 := h.engine()
	if got, _ := e2.GetSettings(h.project.ID); got.StaleThresholdSec != 100 {
		t.Fatalf("settings after restart: %+v", got)
	}
}

func TestManualResume(t *testing.T) {
	h := newClaudeHarness(t)
	h.create(withID("plain", sh("exit 0")))
	_, err := h.e.ResumeAgent(context.Background(), h.project.ID, "plain")
	wantKind(t, err, ErrNotResumable, "no resume arguments")
	h.create(AgentSpec{ID: "c", Command: fakeClaude, Profile: store.ProfileClaudeJSON, ResumeArgs: []string{"--resume", "{sessionId}"},
		Env: map[string]string{"FAKE_CLAUDE_MODE": "success", "FAKE_CLAUDE_RECORD": h.record}})
	_, err = h.e.ResumeAgent(context.Background(), h.project.ID, "c")
	wantKind(t, err, ErrNotResumable, "no session id")
	h.start("c")
	h.waitStatus("c", lifecycle.Completed)
	r, err := h.e.ResumeAgent(context.Background(), h.project.ID, "c")
	if err != nil || r.ResumeCount != 1 || r.AutoResumeCount != 0 {
		t.Fatalf("resume: %v %+v", err, r)
	}
	_, err = h.e.ResumeAgent(context.Background(), h.project.ID, "c")
	if err != nil {
		// Still running, or already done: either a live error or a second resume.
		wantKind(t, err, ErrAlreadyRunning, "")
	}
	h.waitStatus("c", lifecycle.Completed)
	if inv := h.invocations(); inv[1].Resume != sess(1) {
		t.Fatalf("invocations %+v", inv)
	}
}

// Every loaded project is watched, not only the one on screen: an agent
// that hangs in a project the user is not looking at is found stale and
// resumed.
func TestUnselectedProjectIsWatched(t *testing.T) {
	h := newClaudeHarness(t)
	h.claude("a", "silent", "success")
	h.waitSession("a", sess(1))
	other, _, err := h.e.AddProject(t.TempDir(), "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.SelectProject(context.Background(), other.ID); err != nil {
		t.Fatal(err)
	}
	h.goStale()
	r := h.waitStatus("a", lifecycle.Completed)
	if r.AutoResumeCount != 1 {
		t.Fatalf("autoResumeCount %d", r.AutoResumeCount)
	}
	if inv := h.invocations(); len(inv) != 2 || inv[1].Resume != sess(1) {
		t.Fatalf("invocations %+v", inv)
	}
}

// The watchdog and the stale check firing together never resume twice.
func TestOneRecoveryAtATime(t *testing.T) {
	h := newClaudeHarness(t)
	h.claude("a", "silent", "silent")
	h.waitSession("a", sess(1))
	h.clk.Advance(11 * time.Second) // stale now; the ticker fires too
	done := make(chan struct{})
	for range 3 {
		go func() {
			h.e.StaleCheckNow(h.project.ID)
			h.e.WatchdogNow(h.project.ID)
			done <- struct{}{}
		}()
	}
	for range 3 {
		<-done
	}
	h.waitAgent("a", "resumed", func(r *store.Record) bool {
		return r.AutoResumeCount == 1 && r.Status == lifecycle.Running && len(h.invocations()) == 2
	})
	h.settle()
	if r := h.get("a"); r.AutoResumeCount != 1 || len(h.invocations()) != 2 {
		t.Fatalf("autoResumeCount %d, %d runs; want 1 and 2", r.AutoResumeCount, len(h.invocations()))
	}
}
