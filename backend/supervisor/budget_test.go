package supervisor

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/notify"
	"shepherd/backend/procid"
	"shepherd/backend/store"
	"shepherd/internal/testutil"
)

// budgeted creates and starts a fake Claude agent with per-run limits.
func (h *claudeHarness) budgeted(id, mode string, usd float64, turns int, env map[string]string) {
	h.t.Helper()
	e := map[string]string{"FAKE_CLAUDE_MODE": mode, "FAKE_CLAUDE_RESUME_MODE": "success", "FAKE_CLAUDE_RECORD": h.record}
	for k, v := range env {
		e[k] = v
	}
	h.create(AgentSpec{ID: id, Command: fakeClaude, Cwd: h.cwd, Profile: store.ProfileClaudeJSON,
		Args:       []string{"-p", "--verbose", "--output-format", "stream-json", "work on " + id},
		ResumeArgs: []string{"-p", "--verbose", "--output-format", "stream-json", "--resume", "{sessionId}", "--", "continue"},
		Env:        e, GraceSec: 2, MaxBudgetUsd: usd, MaxTurns: turns})
	h.start(id)
}

func (h *claudeHarness) waitStatusPolling(id string, want lifecycle.Status) *store.Record {
	h.t.Helper()
	// Generous: the machine may be busy; a pass is a few hundred milliseconds.
	deadline := time.Now().Add(20 * time.Second)
	for h.e.PollLogsNow(); h.get(id).Status != want; h.e.PollLogsNow() {
		if time.Now().After(deadline) {
			r := h.get(id)
			h.t.Fatalf("%s: %s %s after 20 s, want %s (error %q, budget %q)\nlog:\n%s\nevents:\n%s", id, r.Status, r.ExitReason, want, r.Error, r.BudgetPause, h.log(id), h.events())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return h.get(id)
}

func (h *claudeHarness) answer(id, action string, limit float64) (*store.Record, error) {
	return h.e.AnswerBudget(context.Background(), h.project.ID, id, action, limit)
}

func flagValue(args []string, flag string) string {
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		return ""
	}
	return args[i+1]
}

// A run that reaches its per-run budget is paused, not failed, once the
// turn that reached it has ended — a tool call in flight finishes first —
// with the reason, an event and a notification. Raising the limit resumes
// the session with the new limit passed to the CLI.
func TestBudgetPerRunPausesAndRaise(t *testing.T) {
	h := newClaudeHarness(t)
	h.budgeted("spender", "tool", 5, 0, map[string]string{"FAKE_CLAUDE_COST": "5.12", "FAKE_CLAUDE_TOOL_SECONDS": "1"})
	r := h.waitStatusPolling("spender", lifecycle.Paused)
	if r.BudgetPause != BudgetRun || r.PauseNote != "budget: $5.00 per run reached ($5.12)" || r.ExitReason != lifecycle.ReasonPaused || r.Error != "" {
		t.Fatalf("after the budget: pause %q note %q reason %s error %q", r.BudgetPause, r.PauseNote, r.ExitReason, r.Error)
	}
	if r.Totals == nil || r.Totals.CostUSD == nil || *r.Totals.CostUSD != 5.12 {
		t.Fatalf("the run's cost was not counted: %+v", r.Totals)
	}
	log := h.log("spender")
	if i, j := strings.Index(log, `"tool_result"`), strings.Index(log, "error_max_budget_usd"); i < 0 || j < i {
		t.Fatalf("the tool call did not finish before the budget ended the run:\n%s", log)
	}
	inv := h.invocations()
	if got := flagValue(inv[0].Args, "--max-budget-usd"); got != "5" {
		t.Fatalf("first run args %q: --max-budget-usd %q, want 5", inv[0].Args, got)
	}
	if args := h.get("spender").Args; slices.Contains(args, "--max-budget-usd") {
		t.Fatalf("the flag was stored in args: %q", args)
	}
	h.settle()
	if n := h.rec.notes(notify.KindBudget); len(n) != 1 || !strings.Contains(n[0].Message, "$5.00 per run reached") {
		t.Fatalf("budget notifications %+v", n)
	}
	if ev := h.events(); !strings.Contains(ev, `"event":"budget:reached"`) {
		t.Fatal("no budget:reached event")
	}

	_, err := h.answer("spender", AnswerRaise, 4)
	wantKind(t, err, ErrValidation, "not above the limit reached ($5.12)")
	_, err = h.answer("spender", AnswerRaise, 5.12) // what the run reached, not above it
	wantKind(t, err, ErrValidation, "not above the limit reached ($5.12)")
	_, err = h.answer("spender", AnswerRaise, 0) // no raise: removing is an answer of its own
	wantKind(t, err, ErrValidation, "answer remove to have no limit")
	_, err = h.answer("spender", "later", 0)
	wantKind(t, err, ErrValidation, "use raise, remove, once or stop")
	if _, err := h.answer("spender", AnswerRaise, 10); err != nil {
		t.Fatal(err)
	}
	r = h.waitStatusPolling("spender", lifecycle.Completed)
	if r.MaxBudgetUsd != 10 || r.BudgetPause != "" || r.PauseNote != "" || r.ResumeCount != 1 {
		t.Fatalf("after raise: max %v pause %q note %q resumes %d", r.MaxBudgetUsd, r.BudgetPause, r.PauseNote, r.ResumeCount)
	}
	inv = h.invocations()
	if len(inv) != 2 || inv[1].Resume == "" {
		t.Fatalf("invocations %+v, want a resume", inv)
	}
	// The limit goes before the "--" that ends the options.
	a := inv[1].Args
	if got := flagValue(a, "--max-budget-usd"); got != "10" || slices.Index(a, "--max-budget-usd") > slices.Index(a, "--") {
		t.Fatalf("resume args %q", a)
	}
	_, err = h.answer("spender", AnswerStop, 0)
	wantKind(t, err, ErrNotPaused, "not paused by a budget")
}

// maxTurns pauses the same way; "once" resumes one run without the
// limits (no flag, no pause), after which the limit holds again.
func TestBudgetTurnsAndOnce(t *testing.T) {
	h := newClaudeHarness(t)
	h.budgeted("turner", "success", 0, 3, map[string]string{"FAKE_CLAUDE_TURNS": "3"})
	r := h.waitStatusPolling("turner", lifecycle.Paused)
	if r.BudgetPause != BudgetTurns || r.PauseNote != "turns: 3 reached (3)" {
		t.Fatalf("after the turns: pause %q note %q", r.BudgetPause, r.PauseNote)
	}
	if got := flagValue(h.invocations()[0].Args, "--max-turns"); got != "3" {
		t.Fatalf("--max-turns %q", got)
	}
	if _, err := h.answer("turner", AnswerOnce, 0); err != nil {
		t.Fatal(err)
	}
	r = h.waitStatusPolling("turner", lifecycle.Completed)
	if r.BudgetOnce || r.MaxTurns != 3 {
		t.Fatalf("after the run let past: once %v maxTurns %d", r.BudgetOnce, r.MaxTurns)
	}
	if a := h.invocations()[1].Args; slices.Contains(a, "--max-turns") {
		t.Fatalf("the run let past its limit got it anyway: %q", a)
	}
	// The next run has its limit again.
	h.start("turner")
	h.waitStatusPolling("turner", lifecycle.Paused)
	if got := flagValue(h.invocations()[2].Args, "--max-turns"); got != "3" {
		t.Fatalf("third run --max-turns %q", got)
	}
}

// Stop ends a budget pause for good; the pause survives an engine restart
// and can be answered by the next engine.
func TestBudgetStopAndRestart(t *testing.T) {
	h := newClaudeHarness(t)
	h.budgeted("a", "success", 1, 0, map[string]string{"FAKE_CLAUDE_COST": "2"})
	h.budgeted("b", "success", 1, 0, map[string]string{"FAKE_CLAUDE_COST": "2"})
	h.waitStatusPolling("a", lifecycle.Paused)
	h.waitStatusPolling("b", lifecycle.Paused)
	r, err := h.answer("a", AnswerStop, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != lifecycle.Stopped || r.ExitReason != lifecycle.ReasonStoppedByUser || r.BudgetPause != "" {
		t.Fatalf("after stop: %s %s %q", r.Status, r.ExitReason, r.BudgetPause)
	}
	h.settle()
	h.e.Close()
	h.e = h.engine(func(c *Config) { c.Clock = h.clk })
	if _, err := h.e.SelectProject(context.Background(), h.project.ID); err != nil {
		t.Fatal(err)
	}
	r = h.get("b")
	if r.Status != lifecycle.Paused || r.BudgetPause != BudgetRun || !strings.Contains(r.PauseNote, "$1.00 per run reached ($2.00)") {
		t.Fatalf("after the restart: %s %q %q", r.Status, r.BudgetPause, r.PauseNote)
	}
	if _, err := h.answer("b", AnswerRemove, 0); err != nil { // the limit removed, by that answer only
		t.Fatal(err)
	}
	r = h.waitStatusPolling("b", lifecycle.Completed)
	if r.MaxBudgetUsd != 0 || slices.Contains(h.invocations()[2].Args, "--max-budget-usd") {
		t.Fatalf("after removing the limit: %v %q", r.MaxBudgetUsd, h.invocations()[2].Args)
	}
}

func setDaily(t *testing.T, h *claudeHarness, usd float64) {
	t.Helper()
	s, _ := h.e.GetSettings(h.project.ID)
	s.DailyBudgetUsd = usd
	if _, err := h.e.PutSettings(h.project.ID, s); err != nil {
		t.Fatal(err)
	}
}

// The project's daily budget: once the day's runs cost it, every running
// agent is paused at its safe point (its tool call finishes first) and
// starts wait in the queue, until the next day — then the paused agents
// resume and the queue is released.
func TestDailyBudgetPausesAllUntilTomorrow(t *testing.T) {
	h := newClaudeHarness(t)
	setDaily(t, h, 1)
	h.fakeClaude("tool", "tool", map[string]string{"FAKE_CLAUDE_TOOL_SECONDS": "2", "FAKE_CLAUDE_AFTER_TOOL": "hang"})
	testutil.Eventually(t, "the tool call in flight", func() bool {
		h.e.PollLogsNow()
		return strings.Contains(h.log("tool"), "task_started")
	})
	h.budgeted("spender", "success", 0, 0, map[string]string{"FAKE_CLAUDE_COST": "1.5"})
	h.waitStatusPolling("spender", lifecycle.Completed)
	r := h.waitStatusPolling("tool", lifecycle.Paused)
	if r.BudgetPause != BudgetDaily || r.PauseNote != "daily budget $1.00 reached ($1.50 today)" {
		t.Fatalf("after the daily budget: %q %q", r.BudgetPause, r.PauseNote)
	}
	if !strings.Contains(h.log("tool"), `"tool_result"`) {
		t.Fatal("paused before its tool call finished")
	}
	v, _ := h.e.ProjectState(h.project.ID)
	if !v.BudgetHeld || v.DailyBudgetUsd != 1 || v.CostToday != 1.5 {
		t.Fatalf("project view: held %v budget %v today %v", v.BudgetHeld, v.DailyBudgetUsd, v.CostToday)
	}
	h.create(withID("later", sh("exec sleep 300")))
	if r := h.start("later"); r.Status != lifecycle.Queued {
		t.Fatalf("a start under the daily budget: %s", r.Status)
	}
	_, err := h.answer("tool", AnswerRaise, 1.2)
	wantKind(t, err, ErrValidation, "not above today's cost ($1.50)")
	_, err = h.answer("tool", AnswerRaise, 0)
	wantKind(t, err, ErrValidation, "answer remove to have no limit")
	h.settle()
	if n := h.rec.notes(notify.KindBudget); len(n) != 1 || n[0].AgentID != "" {
		t.Fatalf("notifications %+v, want one for the project", n)
	}

	// Midnight, local time.
	now := h.clk.Now()
	y, m, d := now.Date()
	h.clk.Advance(time.Date(y, m, d+1, 0, 0, 1, 0, time.Local).Sub(now))
	h.waitStatusPolling("tool", lifecycle.Running)
	h.waitStatusPolling("later", lifecycle.Running)
	if r := h.get("tool"); r.BudgetPause != "" || r.ResumeCount != 1 {
		t.Fatalf("the next day: %q resumes %d", r.BudgetPause, r.ResumeCount)
	}
	if v, _ := h.e.ProjectState(h.project.ID); v.BudgetHeld || v.CostToday != 0 {
		t.Fatalf("the next day: held %v today %v", v.BudgetHeld, v.CostToday)
	}
}

// Raising the daily budget (the answer, or the settings) resumes what it
// paused; "once" lets one agent run past it while the others wait.
func TestDailyBudgetRaiseAndOnce(t *testing.T) {
	h := newClaudeHarness(t)
	setDaily(t, h, 1)
	h.fakeClaude("q1", "silent", nil)
	h.fakeClaude("q2", "silent", nil)
	testutil.Eventually(t, "sessions", func() bool {
		h.e.PollLogsNow()
		return h.get("q1").SessionID != "" && h.get("q2").SessionID != ""
	})
	h.budgeted("spender", "success", 0, 0, map[string]string{"FAKE_CLAUDE_COST": "1"})
	h.waitStatusPolling("q1", lifecycle.Paused)
	h.waitStatusPolling("q2", lifecycle.Paused)
	if _, err := h.answer("q1", AnswerOnce, 0); err != nil {
		t.Fatal(err)
	}
	h.waitStatusPolling("q1", lifecycle.Running)
	if r := h.get("q2"); r.Status != lifecycle.Paused {
		t.Fatalf("q2 ran with the budget reached: %s", r.Status)
	}
	if _, err := h.answer("q2", AnswerRaise, 3); err != nil {
		t.Fatal(err)
	}
	h.waitStatusPolling("q2", lifecycle.Running)
	if s, _ := h.e.GetSettings(h.project.ID); s.DailyBudgetUsd != 3 {
		t.Fatalf("daily budget %v after raise", s.DailyBudgetUsd)
	}
	if v, _ := h.e.ProjectState(h.project.ID); v.BudgetHeld {
		t.Fatal("still held after raise")
	}
}

// Budgets are validated on create and in settings, naming the field.
func TestBudgetValidation(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name string
		spec AgentSpec
		msg  string
	}{
		{"negative budget", AgentSpec{MaxBudgetUsd: -1}, "maxBudgetUsd must be 0 (none)"},
		{"negative turns", AgentSpec{MaxTurns: -2}, "maxTurns must be 0 (none)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := withID("x", sh("true"))
			spec.MaxBudgetUsd, spec.MaxTurns = tc.spec.MaxBudgetUsd, tc.spec.MaxTurns
			_, err := h.e.CreateAgent(h.project.ID, spec)
			wantKind(t, err, ErrValidation, tc.msg)
		})
	}
	s := DefaultSettings()
	s.DailyBudgetUsd = -5
	_, err := h.e.PutSettings(h.project.ID, s)
	wantKind(t, err, ErrValidation, "dailyBudgetUsd must be 0 (none)")
}

// A daily hold survives an engine restart on the same day (starts still
// wait), and an engine opened the next day resumes what it paused.
func TestDailyBudgetAcrossRestart(t *testing.T) {
	h := newClaudeHarness(t)
	setDaily(t, h, 1)
	h.fakeClaude("q1", "silent", nil)
	testutil.Eventually(t, "a session", func() bool { h.e.PollLogsNow(); return h.get("q1").SessionID != "" })
	h.budgeted("spender", "success", 0, 0, map[string]string{"FAKE_CLAUDE_COST": "1"})
	h.waitStatusPolling("q1", lifecycle.Paused)
	h.settle()

	reopen := func() {
		h.e.Close()
		h.e = h.engine(func(c *Config) { c.Clock = h.clk })
		if _, err := h.e.SelectProject(context.Background(), h.project.ID); err != nil {
			t.Fatal(err)
		}
	}
	reopen()
	if v, _ := h.e.ProjectState(h.project.ID); !v.BudgetHeld || v.CostToday != 1 {
		t.Fatalf("after a restart the same day: held %v today %v", v.BudgetHeld, v.CostToday)
	}
	if r := h.start("spender"); r.Status != lifecycle.Queued {
		t.Fatalf("a start after the restart: %s", r.Status)
	}
	if r := h.get("q1"); r.Status != lifecycle.Paused || r.BudgetPause != BudgetDaily {
		t.Fatalf("q1 after the restart: %s %q", r.Status, r.BudgetPause)
	}
	// Cancel the queued start (it would spend again the next day).
	if _, err := h.e.StopAgent(context.Background(), h.project.ID, "spender", nil); err != nil {
		t.Fatal(err)
	}
	h.settle()
	h.e.Close()
	now := h.clk.Now()
	y, m, d := now.Date()
	h.clk.Advance(time.Date(y, m, d+1, 0, 0, 1, 0, time.Local).Sub(now))
	reopen()
	h.waitStatusPolling("q1", lifecycle.Running)
	if v, _ := h.e.ProjectState(h.project.ID); v.BudgetHeld {
		t.Fatal("held the next day")
	}
}

// A run that reaches its budget while no engine watches it (the window was
// closed) is found paused by the budget at the next load, its cost counted
// once — not failed.
func TestBudgetReachedWhileAway(t *testing.T) {
	h := newClaudeHarness(t)
	h.budgeted("away", "tool", 1, 0, map[string]string{"FAKE_CLAUDE_COST": "2", "FAKE_CLAUDE_TOOL_SECONDS": "1"})
	pid := h.get("away").PID
	h.e.Close()
	testutil.Eventually(t, "the run to end on its budget", func() bool {
		return !procid.Alive(pid) && strings.Contains(h.log("away"), "error_max_budget_usd")
	})
	h.e = h.engine(func(c *Config) { c.Clock = h.clk })
	sum, err := h.e.SelectProject(context.Background(), h.project.ID)
	if err != nil {
		t.Fatal(err)
	}
	r := h.get("away")
	if r.Status != lifecycle.Paused || r.BudgetPause != BudgetRun || r.PauseNote != "budget: $1.00 per run reached ($2.00)" {
		t.Fatalf("after the load: %s %q %q (error %q); sync %+v", r.Status, r.BudgetPause, r.PauseNote, r.Error, sum.Agents)
	}
	if r.Totals == nil || r.Totals.CostUSD == nil || *r.Totals.CostUSD != 2 || r.Totals.Runs != 1 {
		t.Fatalf("totals %+v", r.Totals)
	}
	if v, _ := h.e.ProjectState(h.project.ID); v.CostToday != 2 {
		t.Fatalf("cost today %v, want 2 (counted once)", v.CostToday)
	}
	if _, err := h.answer("away", AnswerRaise, 5); err != nil {
		t.Fatal(err)
	}
	h.waitStatusPolling("away", lifecycle.Completed)
}

// A raise is always above what was reached, at any scale: a sub-cent limit
// is raised in sub-cents (never rounded to $0.00, never taken as "none"),
// and shown with the digits it needs.
func TestBudgetSubCentRaise(t *testing.T) {
	h := newClaudeHarness(t)
	h.budgeted("tiny", "success", 0.0002, 0, map[string]string{"FAKE_CLAUDE_COST": "0.0003"})
	r := h.waitStatusPolling("tiny", lifecycle.Paused)
	if r.PauseNote != "budget: $0.0002 per run reached ($0.0003)" {
		t.Fatalf("note %q", r.PauseNote)
	}
	for _, bad := range []float64{0, 0.0002, 0.0003} {
		_, err := h.answer("tiny", AnswerRaise, bad)
		wantKind(t, err, ErrValidation, "not above the limit reached ($0.0003)")
	}
	if r := h.get("tiny"); r.MaxBudgetUsd != 0.0002 || r.Status != lifecycle.Paused {
		t.Fatalf("a refused raise changed the agent: %v %s", r.MaxBudgetUsd, r.Status)
	}
	if _, err := h.answer("tiny", AnswerRaise, 0.0004); err != nil {
		t.Fatal(err)
	}
	h.waitStatusPolling("tiny", lifecycle.Completed)
	if got := flagValue(h.invocations()[1].Args, "--max-budget-usd"); got != "0.0004" {
		t.Fatalf("the resumed run's --max-budget-usd %q, want 0.0004", got)
	}
	if r := h.get("tiny"); r.MaxBudgetUsd != 0.0004 {
		t.Fatalf("limit %v after the raise", r.MaxBudgetUsd)
	}
	if ev := h.events(); !strings.Contains(ev, `"action":"raise","budget":"run","limit":0.0004`) {
		t.Fatalf("the raise is not in the events:\n%s", ev)
	}
}
