package supervisor

import (
	"context"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/hook"
	"shepherd/backend/supervisor/queue"
)

// The run queue is package queue's: every start goes through launch, which
// starts the agent at once or queues it; the core runs what the queue
// starts (actionArgs says with what).

// What a start runs, and how it counts.
const (
	actStart      = queue.Start
	actResume     = queue.Resume
	actAutoResume = queue.AutoResume
	actKeepAlive  = queue.KeepAlive
	actAutoStart  = queue.AutoStart
	actUnpause    = queue.Unpause
)

// launch starts a (act says how) or, when its project is paused, held or at
// maxRunning, queues it. a.mu is held.
func (e *Engine) launch(a *agent, act string) error { return e.queues.Launch(&a.p.q, a, act) }

// kickQueue gives free slots to p's queue, off the caller's locks.
func (e *Engine) kickQueue(p *project) { e.queues.Kick(&p.q) }

// cancelQueued takes a queued agent back to the status it came from. a.mu
// is held.
func (e *Engine) cancelQueued(a *agent, reason string) error {
	return e.queues.Cancel(&a.p.q, a, reason)
}

// actionArgs is what act runs and what it changes in the record.
func actionArgs(r *store.Record, act string) ([]string, func(*store.Record)) {
	switch act {
	case actResume:
		return resumeArgs(r), func(n *store.Record) {
			n.ResumeCount++
			n.AutoResumeCount = 0
			n.ResumePrompt = ""
			n.UsageLimitUntil = nil
		}
	case actAutoResume:
		return resumeArgs(r), func(n *store.Record) { n.ResumeCount++; n.AutoResumeCount++; n.ResumePrompt = "" }
	case actKeepAlive:
		return r.Args, func(n *store.Record) { n.RestartCount++; n.NextRestartAt = nil }
	case actUnpause:
		clear := func(n *store.Record) {
			n.ResumeCount++
			n.PausedAt, n.PauseNote, n.PausedWithProject = nil, "", false
			n.BudgetPause = ""
			n.ResumePrompt = ""
			n.UsageLimitUntil = nil
		}
		if resumable(r) {
			return resumeArgs(r), clear
		}
		return r.Args, clear
	case actAutoStart:
		return r.Args, nil
	}
	return r.Args, func(n *store.Record) { n.AutoResumeCount = 0; n.BudgetOnce = false; n.UsageLimitUntil = nil }
}

// Run starts a queued or launched agent at once. a.mu is held.
func (c core) Run(x hook.Agent, act string) error {
	a := x.(*agent)
	if (act == actResume || act == actAutoResume) && notResumable(a.rec) != nil {
		return notResumable(a.rec) // checked when asked; checked again as it runs
	}
	args, mut := actionArgs(a.rec, act)
	return c.e.startLocked(a, args, act, mut)
}

// Enqueued moves a to queued, with what it runs when its turn comes and
// its place. a.mu is held.
func (c core) Enqueued(x hook.Agent, act string, seq int64) error {
	a := x.(*agent)
	from := a.rec.Status
	return c.e.applySteps(a, step{to: lifecycle.Queued, reason: "queued: " + act, mut: func(r *store.Record) {
		r.QueueSeq, r.QueuedAction, r.QueuedFrom = seq, act, from
		r.Desired = lifecycle.DesiredRunning
		r.Error = ""
	}})
}

// Unqueue takes a queued agent back to the status it came from. a.mu is
// held.
func (c core) Unqueue(x hook.Agent, reason string) error {
	a := x.(*agent)
	back := a.rec.QueuedFrom
	if back == "" {
		back = lifecycle.NotStarted
	}
	return c.e.applyNow(a, step{to: back, reason: reason, revert: true, mut: func(r *store.Record) {
		r.QueueSeq, r.QueuedAction, r.QueuedFrom = 0, "", ""
		r.Desired = lifecycle.DesiredStopped
		r.ResumePrompt = "" // an instruction not given is not kept for a later resume
	}})
}

// Show pushes a's state (with its place in the queue). a.mu is held.
func (c core) Show(x hook.Agent) { c.e.emit(EventAgentState, c.e.snapshot(x.(*agent))) }

// Agents is a known project's agents (none for an unknown one).
func (c core) Agents(projectID string) []hook.Agent {
	if p := c.e.known(projectID); p != nil {
		return agentsOf(p)
	}
	return nil
}

// Context ends when the engine closes.
func (c core) Context() context.Context { return c.e.ctx }

// SignalPath is where a project's pause signal file is.
func (c core) SignalPath(projectID string) string { return c.e.pauseSignalPath(projectID) }

// WriteFile writes a file of the engine's atomically.
func (c core) WriteFile(path string, data []byte) error { return c.e.st.WriteFile(path, data, 0o600) }
