// Package budget is spending limits that pause and ask rather than fail
// (SPEC "Workspaces and budgets").
//
// maxBudgetUsd and maxTurns are per run — a start, a resume, a keep-alive
// restart each get the whole limit — as Claude Code's own --max-budget-usd
// and --max-turns are, which the engine passes to a claude-stream-json
// agent at each start (Args). What a run cost and how many turns it took
// arrive on its result line, when the turn that reached the limit has
// ended: that is the safe point (no tool is in flight). A run whose result
// is not a success and that reached a limit (the CLI's error_max_budget_usd
// or error_max_turns, or its figures) is paused with the reason instead of
// failed (Reached, at the result line; PauseMut, at its end); a run that
// succeeded is completed whatever it cost — it has nothing left to do.
//
// dailyBudgetUsd is per project and per local day: the costs of the day's
// runs (package figures). Once they reach it, every running agent of the
// project is paused at its safe point (a tool call in flight finishes
// first) and no agent of it starts — starts wait in its queue — until the
// budget is raised or the day ends; then the agents it paused are resumed
// in the order they were paused (Budgets.CheckDaily). A run paused this way
// reports no cost (it never wrote its result line), so the day's figure
// counts only finished runs.
//
// A budget pause is in the record (budgetPause, pauseNote), so it survives
// an engine restart. The user — only the user (Refuse) — answers it
// (Budgets.Answer): raise the limit that was reached (and resume), remove
// it, resume once past it (one more run without the limit), or stop.
package budget

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/loganalysis"
	"shepherd/backend/money"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/errs"
)

// Which budget paused an agent (store.Record.BudgetPause).
const (
	Run   = "run"   // maxBudgetUsd
	Turns = "turns" // maxTurns
	Daily = "daily" // the project's dailyBudgetUsd
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

// CheckUsd refuses an amount of dollars that is not 0 (none) or a sane
// limit; name says which.
func CheckUsd(name string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > maxUsd {
		return errs.New(errs.Validation, "%s must be 0 (none) or an amount of dollars up to %d, not %v", name, int(maxUsd), v)
	}
	return nil
}

// CheckTurns refuses a number of turns that is not 0 (none) or a sane limit.
func CheckTurns(name string, v int) error {
	if v < 0 || v > 100000 {
		return errs.New(errs.Validation, "%s must be 0 (none) or a number of turns up to 100000, not %d", name, v)
	}
	return nil
}

// Validate checks an agent's per-run limits.
func Validate(agentID string, maxUsd float64, maxTurns int) error {
	if err := CheckUsd(fmt.Sprintf("agent '%s': maxBudgetUsd", agentID), maxUsd); err != nil {
		return err
	}
	return CheckTurns(fmt.Sprintf("agent '%s': maxTurns", agentID), maxTurns)
}

// usd formats dollars as the notes and messages show them, with the
// precision they need ($0.0002, not $0.00).
func usd(v float64) string { return money.Format(v) }

// Args is what a run of r is given on top of args: Claude Code's own
// --max-budget-usd and --max-turns for a claude-stream-json agent with
// limits, before a "--" that ends the options (resume arguments end with
// one). They are added at each start and never stored in args, so an edited
// limit takes effect at the next run; a run the user let go past its limits
// once gets none, and a flag the user put in args is left as they wrote it.
func Args(r *store.Record, args []string) []string {
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

// Hit is a per-run limit a run's result reached.
type Hit struct {
	Kind string // Run or Turns
	Note string // e.g. "budget: $5.00 per run reached ($5.12)"
}

// Reached says which of r's per-run limits the result c reached; nil if
// none, if the run succeeded, or if the user let this run go past them.
func Reached(r *store.Record, c *loganalysis.Claude) *Hit {
	if c == nil || r.BudgetOnce || !c.Failed() {
		return nil
	}
	if r.MaxBudgetUsd > 0 && r.Profile == store.ProfileClaudeJSON &&
		(c.Subtype == "error_max_budget_usd" || c.TotalCostUSD >= r.MaxBudgetUsd) {
		return &Hit{Run, fmt.Sprintf("budget: %s per run reached (%s)", usd(r.MaxBudgetUsd), usd(c.TotalCostUSD))}
	}
	if r.MaxTurns > 0 && (c.Subtype == "error_max_turns" || c.NumTurns >= r.MaxTurns) {
		return &Hit{Turns, fmt.Sprintf("turns: %d reached (%d)", r.MaxTurns, c.NumTurns)}
	}
	return nil
}

// Checkable reports whether r has a per-run limit its log's result could
// have reached (what a run that ended while no engine watched is checked
// for).
func Checkable(r *store.Record) bool {
	return store.Structured(r.Profile) && (r.MaxBudgetUsd != 0 || r.MaxTurns != 0)
}

// PauseMut marks a record paused by a budget of kind, with note, at now.
func PauseMut(kind, note string, now time.Time) func(r *store.Record) {
	return func(r *store.Record) {
		at := now.UTC()
		r.PausedAt, r.PauseNote, r.PausedWithProject = &at, note, false
		r.BudgetPause, r.BudgetOnce = kind, false
		r.AcknowledgedAt = nil // a new question for the user
		r.Desired = lifecycle.DesiredStopped
		r.QueueSeq, r.QueuedAction, r.QueuedFrom = 0, "", ""
	}
}

// Refuse refuses an agent's start, resume or unpause (verb) of r when a
// budget paused it: only the user answers a budget pause (SPEC, threat
// model: a box's figures are claims, and its creator must not wave them
// through). callerAgent is the agent that asks ("" for the user).
func Refuse(callerAgent string, r *store.Record, verb string) error {
	if callerAgent == "" || r.Status != lifecycle.Paused || r.BudgetPause == "" {
		return nil
	}
	note := r.PauseNote
	if note == "" {
		note = r.BudgetPause + " budget"
	}
	return errs.New(errs.PermissionDenied, "agent '%s' cannot %s '%s': it was paused by a budget (%s), and only the user answers a budget pause",
		callerAgent, verb, r.ID, note)
}

// checkRaiseUsd: a raise is an amount of dollars above what was reached.
func checkRaiseUsd(what string, limit, reached float64, reachedWords string) error {
	if err := CheckUsd(what, limit); err != nil {
		return err
	}
	if limit <= reached {
		return errs.New(errs.Validation, "%s: %s is not above %s (%s); answer remove to have no limit", what, usd(limit), reachedWords, usd(reached))
	}
	return nil
}

// checkRaiseTurns: a raise is a whole number of turns above what was reached.
func checkRaiseTurns(agentID string, limit float64, reached int) error {
	n := int(limit)
	if float64(n) != limit {
		return errs.New(errs.Validation, "raise maxTurns of '%s': %v is not a whole number of turns", agentID, limit)
	}
	if err := CheckTurns("maxTurns", n); err != nil {
		return err
	}
	if n <= reached {
		return errs.New(errs.Validation, "raise maxTurns of '%s': %d is not above the limit reached (%d); answer remove to have no limit", agentID, n, reached)
	}
	return nil
}
