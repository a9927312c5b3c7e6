package supervisor

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/proc"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/hook"
	"shepherd/backend/supervisor/queue"
)

// A project's pause and its run queue are package queue's (SPEC "Pause and
// resume"); pausing one agent is a stop of the core's that ends paused,
// with its session kept.

func (e *Engine) pauseSignalPath(projectID string) string {
	return filepath.Join(e.st.ProjectDir(projectID), queue.SignalFile)
}

// startPauseWatcher looks at every loaded project's signal file once a
// second (engine clock), for as long as the engine runs: what the engine
// does without file watching.
func (e *Engine) startPauseWatcher() {
	e.mu.Lock()
	if e.pausing {
		e.mu.Unlock()
		return
	}
	e.pausing = true
	e.mu.Unlock()
	e.armPauseWatcher()
}

func (e *Engine) armPauseWatcher() {
	e.after(e.ctx, time.Second, func() {
		for _, p := range e.loaded() {
			e.checkPauseSignal(p)
			e.checkDaily(p, false) // a new day lifts a daily budget's hold
		}
		e.armPauseWatcher()
	})
}

// checkPauseSignal acts on a change of the project's signal file.
func (e *Engine) checkPauseSignal(p *project) {
	e.queues.CheckSignal(&p.q, p.info.ID, e.pauseSignalPath(p.info.ID), e.clock.Now())
}

// PauseProject pauses a project: nothing of it starts (starts and resumes
// wait in its queue), and its running agents are paused — each at a safe
// point unless now. It creates the signal file with the note, so the pause
// survives a restart, and returns once every agent is paused.
func (e *Engine) PauseProject(ctx context.Context, projectID, note string, now bool) ([]StopResult, error) {
	p, err := e.project(projectID)
	if err != nil {
		return nil, err
	}
	outs, err := e.queues.Pause(ctx, &p.q, projectID, note, now, e.clock.Now(), func(werr error) {
		if werr != nil {
			e.pauseUnwritten(p, note, werr)
		} else {
			e.pauseWritten(p)
		}
	})
	if err != nil {
		return nil, err
	}
	res := make([]StopResult, len(outs))
	for i, o := range outs {
		res[i] = StopResult{AgentID: o.AgentID, Record: o.Record}
		if o.Err != nil {
			res[i].Error = o.Err.Error()
		}
	}
	return res, nil
}

// UnpauseProject resumes a project: its agents paused with it go through
// the queue in the order they were paused, and its queue is released. It
// removes the signal file.
func (e *Engine) UnpauseProject(ctx context.Context, projectID string) error {
	p, err := e.project(projectID)
	if err != nil {
		return err
	}
	e.pauseWritten(p) // a file still to write is not wanted any more
	return e.queues.Unpause(&p.q, projectID, e.clock.Now())
}

// unpauseWhere resumes the paused agents of p that match, in the order they
// were paused, and releases the queue.
func (e *Engine) unpauseWhere(p *project, match func(r *store.Record) bool) {
	e.queues.Resume(&p.q, p.info.ID, match)
}

// PauseAgent pauses one agent: a running one at a safe point (unless now)
// and then stopped — SIGINT, SIGTERM, SIGKILL after its grace — with its
// session kept; a queued one leaves the queue. Either becomes paused.
func (e *Engine) PauseAgent(ctx context.Context, projectID, agentID string, now bool, note string) (*store.Record, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	if len(note) > queue.MaxNote {
		return nil, newErr(ErrValidation, "the pause note is %d bytes long; at most %d", len(note), queue.MaxNote)
	}
	return e.pauseAgent(ctx, a, now, strings.TrimSpace(note), false)
}

func (e *Engine) pauseAgent(ctx context.Context, a *agent, now bool, note string, withProject bool) (*store.Record, error) {
	return e.pauseAgentAs(ctx, a, now, note, withProject, "")
}

// pauseAgentAs pauses a, for a budget when budget names one (budget.go).
func (e *Engine) pauseAgentAs(ctx context.Context, a *agent, now bool, note string, withProject bool, budget string) (*store.Record, error) {
	a.mu.Lock()
	if !e.awaitStart(ctx, a) {
		a.mu.Unlock()
		return nil, ctx.Err()
	}
	if withProject && note == "" {
		_, _, note, _ = a.p.q.Paused()
	}
	pausedMut := func(r *store.Record) {
		at := e.clock.Now().UTC()
		r.PausedAt, r.PauseNote, r.PausedWithProject = &at, note, withProject
		r.BudgetPause = budget
		if budget != "" {
			r.AcknowledgedAt = nil // a new question for the user
		}
		r.Desired = lifecycle.DesiredStopped
		r.QueueSeq, r.QueuedAction, r.QueuedFrom = 0, "", ""
		r.Error = ""
	}
	switch {
	case a.rec.Status == lifecycle.Queued:
		defer a.mu.Unlock()
		err := e.applyNow(a, step{to: lifecycle.Paused, reason: "pause", mut: func(r *store.Record) {
			r.ExitReason = lifecycle.ReasonPaused
			pausedMut(r)
		}})
		if err != nil {
			return nil, err
		}
		e.queues.Left(&a.p.q, a)
		return e.snapshot(a), nil
	case a.rec.Status != lifecycle.Running || a.run == nil:
		st := a.rec.Status
		a.mu.Unlock()
		if st == lifecycle.Paused {
			return nil, newErr(ErrNotRunning, "Process '%s' is already paused", a.rec.ID)
		}
		return nil, errNotRunning(a.rec.ID)
	}
	rn := a.run
	if rn.stopDone != nil {
		done := rn.stopDone
		a.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		return e.snapshot(a), rn.stopErr
	}
	grace := secs(a.rec.GraceSec)
	safe := secs(e.settingsOf(a.rec.ProjectID).SafePointWaitSec)
	waitTool := !now && store.Structured(a.rec.Profile)
	a.mu.Unlock()
	if waitTool {
		e.waitSafePoint(ctx, a, rn, grace+safe)
	}
	a.mu.Lock()
	if a.run != rn || a.rec.Status != lifecycle.Running || a.gone() {
		// It ended meanwhile (its tool was its last step, say): nothing to pause.
		defer a.mu.Unlock()
		return e.snapshot(a), nil
	}
	done, err := e.beginStop(a, rn, "pause", syscall.SIGINT)
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	half := grace / 2
	e.finishPlan(a, rn, done, stopPlan{
		steps:  []proc.Step{{Signal: syscall.SIGINT, Wait: half}, {Signal: syscall.SIGTERM, Wait: grace - half}},
		to:     lifecycle.Paused,
		reason: lifecycle.ReasonPaused,
		mut:    pausedMut,
	})
	a.mu.Lock()
	defer a.mu.Unlock()
	if rn.stopErr == nil && e.ctx.Err() != nil && a.rec.Status.Live() {
		return e.snapshot(a), errClosing()
	}
	return e.snapshot(a), rn.stopErr
}

// waitSafePoint lets a tool call in flight finish before a pause, so the
// session keeps its result: until no tool is in flight, the run ends, or
// limit (engine clock) has passed. The log is looked at every 100 ms.
func (e *Engine) waitSafePoint(ctx context.Context, a *agent, rn *run, limit time.Duration) {
	deadline := e.clock.NewTimer(limit)
	defer deadline.Stop()
	logged := false
	for {
		e.pollRun(a, rn)
		tool, _, busy := rn.inFlight()
		if !busy {
			return
		}
		if !logged {
			logged = true
			a.mu.Lock()
			e.appendEvent(a.rec.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "pause:safe-point", AgentID: a.rec.ID,
				Reason: "waiting for the tool call in flight to finish", Data: map[string]any{"tool": tool, "limitSec": int(limit.Seconds())}})
			a.mu.Unlock()
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-deadline.Chan():
			t.Stop()
			return
		case <-rn.p.Done():
			t.Stop()
			return
		case <-ctx.Done():
			t.Stop()
			return
		case <-e.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// UnpauseAgent resumes a paused agent: with its resume arguments and
// session id when it is resumable, else with its args (through the queue).
func (e *Engine) UnpauseAgent(ctx context.Context, projectID, agentID string) (*store.Record, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rec.Status != lifecycle.Paused {
		return nil, newErr(ErrNotPaused, "Process '%s' is not paused (it is %s)", agentID, a.rec.Status)
	}
	if err := e.prestart(ctx, a, "unpause"); err != nil {
		return nil, err
	}
	if err := e.unpauseLocked(a); err != nil {
		return e.snapshot(a), err
	}
	return e.snapshot(a), nil
}

// unpauseLocked starts (or queues) a paused agent again (one that fails
// stays paused, and says so). a.mu is held.
func (e *Engine) unpauseLocked(a *agent) error { return e.queues.UnpauseAgent(&a.p.q, a) }

// expirePaused fails an agent paused for longer than pausedExpiryDays; its
// session id and log are kept. a.mu is held.
func (e *Engine) expirePaused(a *agent, s Settings) {
	if a.gone() || !queue.Expired(a.rec, s.PausedExpiryDays, e.clock.Now()) {
		return
	}
	err := e.apply(a, lifecycle.Failed, "expired", func(n *store.Record) {
		n.ExitReason = lifecycle.ReasonExpired
		n.Error = fmt.Sprintf("Paused for more than %d days; no longer resumed with its project", s.PausedExpiryDays)
		n.PausedWithProject = false
	})
	if err != nil {
		e.log.Error().Err(err).Str("agent", a.rec.ID).Msg("cannot record that a pause expired")
	}
}

// PauseAgent pauses a running agent for the queue's project pause.
func (c core) PauseAgent(ctx context.Context, a hook.Agent, now bool, note string, withProject bool) (*store.Record, error) {
	return c.e.pauseAgent(ctx, a.(*agent), now, note, withProject)
}
