package supervisor

import (
	"context"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/loganalysis"
	"shepherd/backend/shim"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/budget"
	"shepherd/backend/supervisor/figures"
)

// Budgets are package budget's; here is where the core's lifecycle meets
// them: a result line judged, a run that reached its limit ended paused.

// Which budget paused an agent (store.Record.BudgetPause).
const (
	BudgetRun   = budget.Run
	BudgetTurns = budget.Turns
	BudgetDaily = budget.Daily
)

// The answers to a budget pause.
const (
	AnswerRaise  = budget.AnswerRaise
	AnswerRemove = budget.AnswerRemove
	AnswerOnce   = budget.AnswerOnce
	AnswerStop   = budget.AnswerStop
)

// BudgetArgs is what a run of r is given on top of args: Claude Code's own
// limits (budget.Args).
func BudgetArgs(r *store.Record, args []string) []string { return budget.Args(r, args) }

// AnswerBudget is the user's answer to a budget pause (budget.Budgets.Answer).
func (e *Engine) AnswerBudget(ctx context.Context, projectID, agentID, action string, limit float64) (*store.Record, error) {
	return e.budget.Answer(ctx, projectID, agentID, action, limit)
}

// endOutcome is how a run that wrote a result line ends: paused by a budget
// it reached, else by its result.
func (rn *run) endOutcome() *outcome {
	rn.scanMu.Lock()
	hit, res := rn.budget, rn.result
	rn.scanMu.Unlock()
	if hit != nil && res != nil {
		return &outcome{lifecycle.Paused, lifecycle.ReasonPaused, hit.Note} // only a budget ends a run paused
	}
	return resultOutcome(res)
}

// sawResult judges a result line the moment it is read (the budget's limit
// it reached is kept for the run's end). a.mu is held.
func (e *Engine) sawResult(a *agent, rn *run, c *loganalysis.Claude) {
	rn.judged = c
	hit := e.budget.Result(a, c)
	rn.scanMu.Lock()
	rn.budget = hit
	rn.scanMu.Unlock()
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
	mut := budget.PauseMut(hit.Kind, hit.Note, now)
	err := e.applyNow(a, step{to: lifecycle.Stopping, reason: "budget"},
		step{to: lifecycle.Paused, reason: "budget", data: map[string]any{"budget": hit.Kind, "note": hit.Note}, mut: func(r *store.Record) {
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
	e.budget.Notice(a.rec.ProjectID, a.rec.ID, hit.Note)
	return true
}

// endBudgetWhileAway records the end of a run that exited while no engine
// watched it (its shim kept the exit status) when its log's result reached a
// per-run limit: paused with the reason, its figures counted, as
// endBudgetRun does for a run the engine saw end. It reports whether it did.
// a.mu is held.
func (e *Engine) endBudgetWhileAway(a *agent, st *shim.ExitStatus, now time.Time) bool {
	if !budget.Checkable(a.rec) {
		return false
	}
	res := e.analyze(a)
	hit := budget.Reached(a.rec, res.Claude)
	if hit == nil {
		return false
	}
	var fig store.RunFigures
	counted := false
	mut := budget.PauseMut(hit.Kind, hit.Note, e.clock.Now())
	err := e.applySteps(a, step{to: lifecycle.Stopping, reason: "sync: budget"},
		step{to: lifecycle.Paused, reason: "budget", data: map[string]any{"budget": hit.Kind, "note": hit.Note}, mut: func(r *store.Record) {
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
	e.budget.Notice(a.rec.ProjectID, a.rec.ID, hit.Note)
	return true
}

// checkDaily judges p's daily budget again (budget.Budgets.CheckDaily).
func (e *Engine) checkDaily(p *project, quiet bool) { e.budget.CheckDaily(p.info.ID, &p.daily, quiet) }

// DailyBudget is a project's daily budget and what it cost today.
func (c core) DailyBudget(projectID string) (limit, spent float64) {
	p := c.e.known(projectID)
	if p == nil {
		return 0, 0
	}
	p.mu.Lock()
	limit = p.settings.DailyBudgetUsd
	p.mu.Unlock()
	return limit, p.cost.Today(c.e.clock.Now())
}

// SetDailyBudget changes a project's daily budget in its settings.
func (c core) SetDailyBudget(projectID string, limit float64) error {
	s, err := c.e.GetSettings(projectID)
	if err != nil {
		return err
	}
	s.DailyBudgetUsd = limit
	_, err = c.e.PutSettings(projectID, s)
	return err
}

// PauseRunning pauses every running agent of a project at its safe point
// for the daily budget.
func (c core) PauseRunning(projectID, note string) {
	e := c.e
	p := e.known(projectID)
	if p == nil {
		return
	}
	for _, a := range p.list() {
		a.mu.Lock()
		running := a.rec.Status == lifecycle.Running && a.run != nil && !a.rec.BudgetOnce
		a.mu.Unlock()
		if running {
			e.goTask(func() {
				if _, err := e.pauseAgentAs(e.ctx, a, false, note, false, BudgetDaily); err != nil && !isKind(err, ErrNotRunning) {
					e.log.Warn().Err(err).Str("project", projectID).Str("agent", a.id()).Msg("cannot pause for the daily budget")
				}
			})
		}
	}
}

// ResumePaused resumes, in the order they were paused, the agents of a
// project that match, and releases its queue.
func (c core) ResumePaused(projectID string, match func(*store.Record) bool) {
	if p := c.e.known(projectID); p != nil {
		c.e.unpauseWhere(p, match)
	}
}
