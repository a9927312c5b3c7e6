package budget

import (
	"context"
	"fmt"
	"sync"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"

	"shepherd/backend/lifecycle"
	"shepherd/backend/loganalysis"
	"shepherd/backend/notify"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/errs"
	"shepherd/backend/supervisor/hook"
)

// Core is what the budgets need of the engine's core.
type Core interface {
	Clock() clockwork.Clock
	Go(f func()) bool // a task of the engine's (never once it is closing)
	Event(projectID string, ev store.Event)
	Notify(n notify.Notification)
	NotifyNative(projectID string) bool
	ProjectName(projectID string) string
	// ProjectChanged pushes a project's state (its daily budget's hold).
	ProjectChanged(projectID string)
	// DailyBudget is a project's dailyBudgetUsd (0: none) and what its
	// runs cost today; SetDailyBudget changes the setting.
	DailyBudget(projectID string) (limit, spent float64)
	SetDailyBudget(projectID string, limit float64) error

	Agent(projectID, agentID string) (hook.Agent, error)
	// Under the agent's lock: a change of fields, a transition, the record
	// as callers see it, a start again (through the queue).
	Update(a hook.Agent, mut func(*store.Record)) error
	Apply(a hook.Agent, to lifecycle.Status, reason string, mut func(*store.Record)) error
	Snapshot(a hook.Agent) *store.Record
	Unpause(a hook.Agent) error
	// PauseRunning pauses a project's running agents at their safe point
	// for its daily budget (note says why); ResumePaused resumes its paused
	// agents that match, in the order they were paused, and releases its
	// queue.
	PauseRunning(projectID, note string)
	ResumePaused(projectID string, match func(*store.Record) bool)
}

// Budgets hangs the budgets on the core: it judges result lines, holds a
// project whose daily budget is reached, and takes the user's answers.
type Budgets struct {
	core Core
	log  zerolog.Logger
}

// New returns the budgets over core.
func New(core Core, log zerolog.Logger) *Budgets { return &Budgets{core: core, log: log} }

// Hold is a project's daily budget's hold: its day's costs reached the
// budget, its running agents were paused and its starts wait. Safe for
// concurrent use; its lock is a leaf.
type Hold struct {
	mu   sync.Mutex
	held bool
}

// Held reports whether the project is held.
func (h *Hold) Held() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held
}

// Prestart refuses an agent's start, resume or unpause (verb) of an agent a
// budget paused: only the user answers that (Refuse). r is the record of
// the agent to start.
func (b *Budgets) Prestart(ctx context.Context, r *store.Record, verb string) error {
	if c := hook.CallerOf(ctx); c != nil {
		return Refuse(c.AgentID, r, verb)
	}
	return nil
}

// Args adds a run's limits to its arguments (see Args).
func (b *Budgets) Args(r *store.Record, args []string) []string { return Args(r, args) }

// Result judges a result line the moment it is read: the per-run limit it
// reached (kept by the core for the run's end), and the end of a run let
// past its limits once. a's lock is held.
func (b *Budgets) Result(a hook.Agent, c *loganalysis.Claude) *Hit {
	r := a.Rec()
	hit := Reached(r, c)
	if r.BudgetOnce {
		if err := b.core.Update(a, func(r *store.Record) { r.BudgetOnce = false }); err != nil {
			b.log.Warn().Err(err).Str("agent", r.ID).Msg("cannot record that the run past the budget has ended")
		}
	}
	return hit
}

// Notice records and notifies a budget's pause: an agent's (agentID), or a
// project's daily one (agentID "").
func (b *Budgets) Notice(projectID, agentID, note string) {
	b.core.Event(projectID, store.Event{Time: b.core.Clock().Now().UTC(), Event: "budget:reached", AgentID: agentID, Reason: note})
	b.log.Info().Str("project", projectID).Str("agent", agentID).Str("note", note).Msg("budget reached")
	msg := fmt.Sprintf("Agent %s paused: %s. Raise the limit, resume once, or stop.", agentID, note)
	title := "Budget reached"
	if agentID == "" {
		msg = fmt.Sprintf("Project %s paused: %s. Raise it in the project's settings or wait for tomorrow.", b.core.ProjectName(projectID), note)
		title = "Daily budget reached"
	}
	b.core.Notify(notify.Notification{Level: notify.Warning, Kind: notify.KindBudget, Title: title,
		ProjectID: projectID, AgentID: agentID, Native: b.core.NotifyNative(projectID), Message: msg})
}

// CheckDaily acts on a change of a project's daily budget's verdict (h is
// its hold): reached, its running agents are paused (in the background)
// and its starts held; no longer reached (raised, or a new day), the agents
// it paused are resumed and the queue released. quiet (at load) takes the
// verdict as it is without a notice. The core calls it after each counted
// run, after a change of settings, and every second or so (a new day).
func (b *Budgets) CheckDaily(projectID string, h *Hold, quiet bool) {
	limit, spent := b.core.DailyBudget(projectID)
	held := limit > 0 && spent >= limit
	h.mu.Lock()
	was := h.held
	h.held = held
	h.mu.Unlock()
	switch {
	case held && !was:
		note := fmt.Sprintf("daily budget %s reached (%s today)", usd(limit), usd(spent))
		if !quiet {
			b.Notice(projectID, "", note)
		}
		b.core.ProjectChanged(projectID)
		b.core.Go(func() { b.core.PauseRunning(projectID, note) })
	case !held && (was || quiet):
		if was {
			b.core.Event(projectID, store.Event{Time: b.core.Clock().Now().UTC(), Event: "budget:daily-lifted",
				Data: map[string]any{"dailyBudgetUsd": limit, "costToday": spent}})
			b.core.ProjectChanged(projectID)
		}
		b.core.ResumePaused(projectID, func(r *store.Record) bool { return r.BudgetPause == Daily })
	}
}

// Answer is the user's answer to a budget pause: raise the limit that was
// reached to limit and resume, remove that limit and resume, resume once
// past the limit, or stop. A raise is always above what was reached (the
// limit and what the run or the day reached past it): never 0, which is no
// raise — removing a limit is an answer of its own. Raising or removing a
// daily budget changes the project's settings and resumes every agent it
// paused.
func (b *Budgets) Answer(ctx context.Context, projectID, agentID, action string, limit float64) (*store.Record, error) {
	a, err := b.core.Agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	a.Lock()
	r := a.Rec()
	kind := r.BudgetPause
	if r.Status != lifecycle.Paused || kind == "" {
		defer a.Unlock()
		return nil, errs.New(errs.NotPaused, "Process '%s' is not paused by a budget (it is %s)", agentID, r.Status)
	}
	switch action {
	case AnswerStop:
		defer a.Unlock()
		err := b.core.Apply(a, lifecycle.Stopped, "budget: stop", func(r *store.Record) {
			r.ExitReason = lifecycle.ReasonStoppedByUser
			r.BudgetPause, r.BudgetOnce, r.PausedWithProject = "", false, false
			r.Desired = lifecycle.DesiredStopped
		})
		if err != nil {
			return nil, err
		}
		b.answered(a, action, 0)
		return b.core.Snapshot(a), nil
	case AnswerOnce:
		defer a.Unlock()
		if err := b.core.Update(a, func(r *store.Record) { r.BudgetOnce = true }); err != nil {
			return nil, err
		}
		b.answered(a, action, 0)
		return b.core.Snapshot(a), b.core.Unpause(a)
	case AnswerRaise, AnswerRemove:
	default:
		a.Unlock()
		return nil, errs.New(errs.Validation, "budget answer %q: use raise, remove, once or stop", action)
	}
	if action == AnswerRemove {
		limit = 0
	}
	switch kind {
	case Daily:
		a.Unlock()
		return b.raiseDaily(projectID, a, action, limit)
	case Turns:
		defer a.Unlock()
		if action == AnswerRaise {
			reached := r.MaxTurns
			if lr := r.LastResult; lr != nil {
				reached = max(reached, lr.Turns)
			}
			if err := checkRaiseTurns(agentID, limit, reached); err != nil {
				return nil, err
			}
		}
		if err := b.core.Update(a, func(r *store.Record) { r.MaxTurns = int(limit) }); err != nil {
			return nil, err
		}
	default:
		defer a.Unlock()
		if action == AnswerRaise {
			reached := r.MaxBudgetUsd
			if lr := r.LastResult; lr != nil && lr.CostUSD != nil {
				reached = max(reached, *lr.CostUSD)
			}
			if err := checkRaiseUsd(fmt.Sprintf("raise maxBudgetUsd of '%s'", agentID), limit, reached, "the limit reached"); err != nil {
				return nil, err
			}
		}
		if err := b.core.Update(a, func(r *store.Record) { r.MaxBudgetUsd = limit }); err != nil {
			return nil, err
		}
	}
	b.answered(a, action, limit)
	return b.core.Snapshot(a), b.core.Unpause(a)
}

// raiseDaily raises a project's daily budget above what today cost, or
// removes it; the agents it paused resume (CheckDaily, on the change of
// settings).
func (b *Budgets) raiseDaily(projectID string, a hook.Agent, action string, limit float64) (*store.Record, error) {
	daily, spent := b.core.DailyBudget(projectID)
	if action == AnswerRaise {
		if err := checkRaiseUsd(fmt.Sprintf("raise the daily budget of project '%s'", b.core.ProjectName(projectID)), limit,
			max(spent, daily), "today's cost"); err != nil {
			return nil, err
		}
	}
	if err := b.core.SetDailyBudget(projectID, limit); err != nil {
		return nil, err
	}
	a.Lock()
	defer a.Unlock()
	b.answered(a, action, limit)
	return b.core.Snapshot(a), nil
}

// answered records the user's answer. a's lock is held.
func (b *Budgets) answered(a hook.Agent, action string, limit float64) {
	r := a.Rec()
	data := map[string]any{"action": action, "budget": r.BudgetPause}
	if action == AnswerRaise {
		data["limit"] = limit
	}
	b.core.Event(r.ProjectID, store.Event{Time: b.core.Clock().Now().UTC(), Event: "budget:answer", AgentID: r.ID, Data: data})
	b.log.Info().Str("agent", r.ID).Str("action", action).Float64("limit", limit).Msg("budget answered")
}
