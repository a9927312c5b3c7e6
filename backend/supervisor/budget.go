package supervisor

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/loganalysis"
	"shepherd/backend/money"
	"shepherd/backend/notify"
	"shepherd/backend/shim"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/figures"
)

// Budgets (SPEC "Workspaces and budgets"): spending limits that pause and
// ask rather than fail.
//
// maxBudgetUsd and maxTurns are per run — a start, a resume, a keep-alive
// restart each get the whole limit — as Claude Code's own --max-budget-usd
// and --max-turns are, which the engine passes to a claude-stream-json
// agent at each start. What a run cost and how many turns it took arrive on
// its result line, when the turn that reached the limit has ended: that is
// the safe point (no tool is in flight). A run whose result is not a success
// and that reached a limit (the CLI's error_max_budget_usd or error_max_turns,
// or its figures) is paused with the reason instead of failed; a run that
// succeeded is completed whatever it cost — it has nothing left to do.
//
// dailyBudgetUsd is per project and per local day: the costs of the day's
// runs (figures.go). Once they reach it, every running agent of the project
// is paused at its safe point (a tool call in flight finishes first) and no
// agent of it starts — starts wait in its queue — until the budget is
// raised or the day ends; then the agents it paused are resumed in the
// order they were paused. A run paused this way reports no cost (it never
// wrote its result line), so the day's figure counts only finished runs.
//
// A budget pause is in the record (budgetPause, pauseNote), so it survives an
// engine restart. The user answers it: raise the limit that was reached (and
// resume), resume once past it (one more run without the limit), or stop.

// Which budget paused an agent (store.Record.BudgetPause).
const (
	BudgetRun   = "run"   // maxBudgetUsd
	BudgetTurns = "turns" // maxTurns
	BudgetDaily = "daily" // the project's dailyBudgetUsd
)

// The answers to a budget pause.
const (
	AnswerRaise  = "raise"
	AnswerRemove = "remove" // remove the limit that was reached (the only way to have none)
	AnswerOnce   = "once"
	AnswerStop   = "stop"
)

// maxUsd bounds a budget, so a typo does not pass as "no limit".
const maxUsd = 1e6

func checkUsd(name string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > maxUsd {
		return newErr(ErrValidation, "%s must be 0 (none) or an amount of dollars up to %d, not %v", name, int(maxUsd), v)
	}
	return nil
}

func checkTurns(name string, v int) error {
	if v < 0 || v > 100000 {
		return newErr(ErrValidation, "%s must be 0 (none) or a number of turns up to 100000, not %d", name, v)
	}
	return nil
}

func validateBudgets(spec *AgentSpec) error {
	if err := checkUsd(fmt.Sprintf("agent '%s': maxBudgetUsd", spec.ID), spec.MaxBudgetUsd); err != nil {
		return err
	}
	return checkTurns(fmt.Sprintf("agent '%s': maxTurns", spec.ID), spec.MaxTurns)
}

// usd formats dollars as the notes and messages show them, with the
// precision they need ($0.0002, not $0.00).
func usd(v float64) string { return money.Format(v) }

// BudgetArgs is what a run of r is given on top of args: Claude Code's own
// --max-budget-usd and --max-turns for a claude-stream-json agent with
// limits, before a "--" that ends the options (resume arguments end with
// one). They are added at each start and never stored in args, so an edited
// limit takes effect at the next run; a run the user let go past its limits
// once gets none, and a flag the user put in args is left as they wrote it.
func BudgetArgs(r *store.Record, args []string) []string {
	if r.Profile != store.ProfileClaudeJSON || r.BudgetOnce {
		return args
	}
	var extra []string
	if r.MaxBudgetUsd > 0 && !slices.Contains(args, "--max-budget-usd") {
		extra = append(extra, "--max-budget-usd", strconv.FormatFloat(r.MaxBudgetUsd, 'f', -1, 64))
	}
	if r.MaxTurns > 0 && !slices.Contains(args, "--max-turns") {
		extra = append(extra, "--max-turns", strconv.Itoa(r.MaxTurns))
	}
	if len(extra) == 0 {
		return args
	}
	at := slices.Index(args, "--")
	if at < 0 {
		at = len(args)
	}
	out := make([]string, 0, len(args)+len(extra))
	out = append(out, args[:at]...)
	out = append(out, extra...)
	return append(out, args[at:]...)
}

// budgetHit is a per-run limit a run's result reached.
type budgetHit struct {
	kind string // BudgetRun or BudgetTurns
	note string // e.g. "budget: $5.00 per run reached ($5.12)"
}

// budgetReached says which of r's per-run limits the result c reached; nil
// if none, if the run succeeded, or if the user let this run go past them.
func budgetReached(r *store.Record, c *loganalysis.Claude) *budgetHit {
	if c == nil || r.BudgetOnce || !c.Failed() {
		return nil
	}
	if r.MaxBudgetUsd > 0 && r.Profile == store.ProfileClaudeJSON &&
		(c.Subtype == "error_max_budget_usd" || c.TotalCostUSD >= r.MaxBudgetUsd) {
		return &budgetHit{BudgetRun, fmt.Sprintf("budget: %s per run reached (%s)", usd(r.MaxBudgetUsd), usd(c.TotalCostUSD))}
	}
	if r.MaxTurns > 0 && (c.Subtype == "error_max_turns" || c.NumTurns >= r.MaxTurns) {
		return &budgetHit{BudgetTurns, fmt.Sprintf("turns: %d reached (%d)", r.MaxTurns, c.NumTurns)}
	}
	return nil
}

// endOutcome is how a run that wrote a result line ends: paused by a budget
// it reached, else by its result.
func (rn *run) endOutcome() *outcome {
	rn.scanMu.Lock()
	hit, res := rn.budget, rn.result
	rn.scanMu.Unlock()
	if hit != nil && res != nil {
		return &outcome{lifecycle.Paused, lifecycle.ReasonPaused, hit.note} // only a budget ends a run paused
	}
	return resultOutcome(res)
}

// sawResult judges a result line the moment it is read: which budget it
// reached (kept for the run's end), and the end of a run let past its
// limits once. a.mu is held.
func (e *Engine) sawResult(a *agent, rn *run, c *loganalysis.Claude) {
	rn.judged = c
	hit := budgetReached(a.rec, c)
	rn.scanMu.Lock()
	rn.budget = hit
	rn.scanMu.Unlock()
	if a.rec.BudgetOnce {
		_ = e.update(a, func(r *store.Record) { r.BudgetOnce = false })
	}
}

// budgetPauseMut marks a record paused by a budget.
func (e *Engine) budgetPauseMut(kind, note string) func(r *store.Record) {
	return func(r *store.Record) {
		at := e.clock.Now().UTC()
		r.PausedAt, r.PauseNote, r.PausedWithProject = &at, note, false
		r.BudgetPause, r.BudgetOnce = kind, false
		r.AcknowledgedAt = nil // a new question for the user
		r.Desired = lifecycle.DesiredStopped
		r.QueueSeq, r.QueuedAction, r.QueuedFrom = 0, "", ""
	}
}

// endBudgetRun records the end of a run that reached a per-run limit: it
// ended on its own after its result line (or was stopped after the result
// grace), and is paused with the reason — stopping then paused, in one write.
// a.mu is held.
func (e *Engine) endBudgetRun(a *agent, rn *run, set func(r *store.Record)) bool {
	rn.scanMu.Lock()
	hit := rn.budget
	rn.scanMu.Unlock()
	var fig store.RunFigures
	counted := false
	now := e.clock.Now().UTC()
	mut := e.budgetPauseMut(hit.kind, hit.note)
	err := e.applyNow(a, step{to: lifecycle.Stopping, reason: "budget"},
		step{to: lifecycle.Paused, reason: "budget", data: map[string]any{"budget": hit.kind, "note": hit.note}, mut: func(r *store.Record) {
			r.ExitReason, r.Error = lifecycle.ReasonPaused, ""
			set(r)
			r.LastActivityAt = rn.activityAt()
			fig, counted = figures.Count(r, rn.resultNow(), now)
			mut(r)
		}})
	if err != nil {
		return false
	}
	if counted {
		e.runCounted(a, fig)
	}
	e.endRun(a, rn)
	e.budgetNotice(a.rec.ProjectID, a.rec.ID, hit.note)
	return true
}

// endBudgetWhileAway records the end of a run that exited while no engine
// watched it (its shim kept the exit status) when its log's result reached a
// per-run limit: paused with the reason, its figures counted, as
// endBudgetRun does for a run the engine saw end. It reports whether it did.
// a.mu is held.
func (e *Engine) endBudgetWhileAway(a *agent, st *shim.ExitStatus, now time.Time) bool {
	if !store.Structured(a.rec.Profile) || a.rec.MaxBudgetUsd == 0 && a.rec.MaxTurns == 0 {
		return false
	}
	res := e.analyze(a)
	hit := budgetReached(a.rec, res.Claude)
	if hit == nil {
		return false
	}
	var fig store.RunFigures
	counted := false
	mut := e.budgetPauseMut(hit.kind, hit.note)
	err := e.applySteps(a, step{to: lifecycle.Stopping, reason: "sync: budget"},
		step{to: lifecycle.Paused, reason: "budget", data: map[string]any{"budget": hit.kind, "note": hit.note}, mut: func(r *store.Record) {
			r.ExitReason, r.Error, r.Attached, r.PreviousStatus = lifecycle.ReasonPaused, "", true, ""
			setExit(r, st, now)
			fig, counted = figures.Count(r, res.Claude, now)
			mut(r)
		}})
	if err != nil {
		return false
	}
	if counted {
		e.runCounted(a, fig)
	}
	e.budgetNotice(a.rec.ProjectID, a.rec.ID, hit.note)
	return true
}

// budgetNotice records and notifies a budget pause.
func (e *Engine) budgetNotice(projectID, agentID, note string) {
	e.appendEvent(projectID, store.Event{Time: e.clock.Now().UTC(), Event: "budget:reached", AgentID: agentID, Reason: note})
	e.log.Info().Str("project", projectID).Str("agent", agentID).Str("note", note).Msg("budget reached")
	msg := fmt.Sprintf("Agent %s paused: %s. Raise the limit, resume once, or stop.", agentID, note)
	title := "Budget reached"
	if agentID == "" {
		msg = fmt.Sprintf("Project %s paused: %s. Raise it in the project's settings or wait for tomorrow.", e.projectName(projectID), note)
		title = "Daily budget reached"
	}
	e.notify(notify.Notification{Level: notify.Warning, Kind: notify.KindBudget, Title: title,
		ProjectID: projectID, AgentID: agentID, Native: e.settingsOf(projectID).NotifyNative, Message: msg})
}

// dailyState is what the engine knows of a project's daily budget, under
// p.mu.
type dailyState struct {
	held bool // the day's costs reached the budget: running agents were paused, starts wait
}

// dailyReachedLocked reports whether the project's costs of today reached
// its daily budget. p.mu is held.
func (p *project) dailyReachedLocked(now time.Time) bool {
	b := p.settings.DailyBudgetUsd
	return b > 0 && p.cost.Today(now) >= b
}

// checkDaily acts on a change of the daily budget's verdict: reached, the
// project's running agents are paused (in the background) and its starts
// held; no longer reached (raised, or a new day), the agents it paused are
// resumed and the queue released. quiet (at load) takes the verdict as it is
// without a notice. It runs after each counted run, after a change of
// settings, and every second with the pause watcher (a new day).
func (e *Engine) checkDaily(p *project, quiet bool) {
	now := e.clock.Now()
	p.mu.Lock()
	was := p.daily.held
	held := p.dailyReachedLocked(now)
	p.daily.held = held
	budget, spent := p.settings.DailyBudgetUsd, p.cost.Today(now)
	p.mu.Unlock()
	switch {
	case held && !was:
		note := fmt.Sprintf("daily budget %s reached (%s today)", usd(budget), usd(spent))
		if !quiet {
			e.budgetNotice(p.info.ID, "", note)
		}
		e.emit(EventProjectState, e.view(p))
		e.goTask(func() { e.pauseRunningFor(p, note) })
	case !held && (was || quiet):
		if was {
			e.appendEvent(p.info.ID, store.Event{Time: now.UTC(), Event: "budget:daily-lifted",
				Data: map[string]any{"dailyBudgetUsd": budget, "costToday": spent}})
			e.emit(EventProjectState, e.view(p))
		}
		e.resumeDaily(p)
	}
}

// pauseRunningFor pauses every running agent of p at its safe point for the
// daily budget.
func (e *Engine) pauseRunningFor(p *project, note string) {
	for _, a := range p.list() {
		a.mu.Lock()
		running := a.rec.Status == lifecycle.Running && a.run != nil && !a.rec.BudgetOnce
		a.mu.Unlock()
		if running {
			e.goTask(func() { _, _ = e.pauseAgentAs(e.ctx, a, false, note, false, BudgetDaily) })
		}
	}
}

// resumeDaily resumes, in the order they were paused, the agents the daily
// budget paused, and releases the queue.
func (e *Engine) resumeDaily(p *project) {
	e.unpauseWhere(p, func(r *store.Record) bool { return r.BudgetPause == BudgetDaily })
}

// AnswerBudget is the user's answer to a budget pause: raise the limit that
// was reached to limit and resume, remove that limit and resume, resume once
// past the limit, or stop. A raise is always above what was reached (the
// limit and what the run or the day reached past it): never 0, which is no
// raise — removing a limit is an answer of its own. Raising or removing a
// daily budget changes the project's settings and resumes every agent it
// paused.
func (e *Engine) AnswerBudget(ctx context.Context, projectID, agentID, action string, limit float64) (*store.Record, error) {
	p, a, err := e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	kind := a.rec.BudgetPause
	if a.rec.Status != lifecycle.Paused || kind == "" {
		defer a.mu.Unlock()
		return nil, newErr(ErrNotPaused, "Process '%s' is not paused by a budget (it is %s)", agentID, a.rec.Status)
	}
	switch action {
	case AnswerStop:
		defer a.mu.Unlock()
		err := e.apply(a, lifecycle.Stopped, "budget: stop", func(r *store.Record) {
			r.ExitReason = lifecycle.ReasonStoppedByUser
			r.BudgetPause, r.BudgetOnce, r.PausedWithProject = "", false, false
			r.Desired = lifecycle.DesiredStopped
		})
		if err != nil {
			return nil, err
		}
		e.budgetAnswered(a, action, 0)
		return e.snapshot(a), nil
	case AnswerOnce:
		defer a.mu.Unlock()
		if err := e.update(a, func(r *store.Record) { r.BudgetOnce = true }); err != nil {
			return nil, err
		}
		e.budgetAnswered(a, action, 0)
		return e.snapshot(a), e.unpauseLocked(a)
	case AnswerRaise, AnswerRemove:
	default:
		a.mu.Unlock()
		return nil, newErr(ErrValidation, "budget answer %q: use raise, remove, once or stop", action)
	}
	if action == AnswerRemove {
		limit = 0
	}
	switch kind {
	case BudgetDaily:
		a.mu.Unlock()
		return e.raiseDaily(p, a, action, limit)
	case BudgetTurns:
		defer a.mu.Unlock()
		if action == AnswerRaise {
			reached := a.rec.MaxTurns
			if lr := a.rec.LastResult; lr != nil {
				reached = max(reached, lr.Turns)
			}
			if err := checkRaiseTurns(agentID, limit, reached); err != nil {
				return nil, err
			}
		}
		if err := e.update(a, func(r *store.Record) { r.MaxTurns = int(limit) }); err != nil {
			return nil, err
		}
	default:
		defer a.mu.Unlock()
		if action == AnswerRaise {
			reached := a.rec.MaxBudgetUsd
			if lr := a.rec.LastResult; lr != nil && lr.CostUSD != nil {
				reached = max(reached, *lr.CostUSD)
			}
			if err := checkRaiseUsd(fmt.Sprintf("raise maxBudgetUsd of '%s'", agentID), limit, reached, "the limit reached"); err != nil {
				return nil, err
			}
		}
		if err := e.update(a, func(r *store.Record) { r.MaxBudgetUsd = limit }); err != nil {
			return nil, err
		}
	}
	e.budgetAnswered(a, action, limit)
	return e.snapshot(a), e.unpauseLocked(a)
}

// checkRaiseUsd: a raise is an amount of dollars above what was reached.
func checkRaiseUsd(what string, limit, reached float64, reachedWords string) error {
	if err := checkUsd(what, limit); err != nil {
		return err
	}
	if limit <= reached {
		return newErr(ErrValidation, "%s: %s is not above %s (%s); answer remove to have no limit", what, usd(limit), reachedWords, usd(reached))
	}
	return nil
}

// checkRaiseTurns: a raise is a whole number of turns above what was reached.
func checkRaiseTurns(agentID string, limit float64, reached int) error {
	n := int(limit)
	if float64(n) != limit {
		return newErr(ErrValidation, "raise maxTurns of '%s': %v is not a whole number of turns", agentID, limit)
	}
	if err := checkTurns("maxTurns", n); err != nil {
		return err
	}
	if n <= reached {
		return newErr(ErrValidation, "raise maxTurns of '%s': %d is not above the limit reached (%d); answer remove to have no limit", agentID, n, reached)
	}
	return nil
}

// raiseDaily raises a project's daily budget above what today cost, or
// removes it; the agents it paused resume.
func (e *Engine) raiseDaily(p *project, a *agent, action string, limit float64) (*store.Record, error) {
	p.mu.Lock()
	s := p.settings
	spent := p.cost.Today(e.clock.Now())
	p.mu.Unlock()
	if action == AnswerRaise {
		if err := checkRaiseUsd(fmt.Sprintf("raise the daily budget of project '%s'", e.projectName(p.info.ID)), limit,
			max(spent, s.DailyBudgetUsd), "today's cost"); err != nil {
			return nil, err
		}
	}
	s.DailyBudgetUsd = limit
	if _, err := e.PutSettings(p.info.ID, s); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	e.budgetAnswered(a, action, limit)
	return e.snapshot(a), nil
}

// budgetAnswered records the user's answer. a.mu is held.
func (e *Engine) budgetAnswered(a *agent, action string, limit float64) {
	data := map[string]any{"action": action, "budget": a.rec.BudgetPause}
	if action == AnswerRaise {
		data["limit"] = limit
	}
	e.appendEvent(a.rec.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "budget:answer", AgentID: a.rec.ID, Data: data})
	e.log.Info().Str("agent", a.rec.ID).Str("action", action).Float64("limit", limit).Msg("budget answered")
}
