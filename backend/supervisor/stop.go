package supervisor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/proc"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/figures"
)

// onTimeout is layer 2: running past timeoutSec → timed_out → graceful stop.
func (e *Engine) onTimeout(a *agent, rn *run) {
	a.mu.Lock()
	if a.run != rn || a.rec.Status != lifecycle.Running || a.gone() {
		a.mu.Unlock()
		return
	}
	t := a.rec.TimeoutSec
	if err := e.applyNow(a, step{to: lifecycle.TimedOut, reason: "timeout", mut: func(r *store.Record) {
		r.Desired = lifecycle.DesiredStopped
		r.Error = fmt.Sprintf("Timed out after %d s", t)
	}}); err != nil {
		a.mu.Unlock()
		return
	}
	e.appendEvent(a.rec.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "auto-execution:timeout",
		AgentID: a.rec.ID, Data: map[string]any{"timeoutSec": t, "pid": rn.pid()}})
	graceEnd := e.clock.Now().Add(secs(a.rec.GraceSec))
	done, err := e.beginStop(a, rn, "timeout", syscall.SIGTERM)
	a.mu.Unlock()
	if err == nil {
		e.finishStop(a, rn, done, graceEnd, lifecycle.ReasonTimedOut)
	}
}

// StopAgent stops a live agent: SIGTERM to its group, grace (nil: the
// agent's graceSec), SIGKILL, and confirms the group is gone. An agent
// waiting for a keep-alive restart has the restart cancelled.
func (e *Engine) StopAgent(ctx context.Context, projectID, agentID string, grace *time.Duration) (*store.Record, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	return e.stop(ctx, a, grace, e.clock.Now())
}

// stop stops a's run. The grace is counted from asked, the moment the stop
// was requested, so that stopping many agents at once takes the grace and
// not the grace plus the time to record every one of them.
func (e *Engine) stop(ctx context.Context, a *agent, grace *time.Duration, asked time.Time) (*store.Record, error) {
	a.mu.Lock()
	if !e.awaitStart(ctx, a) {
		a.mu.Unlock()
		return nil, ctx.Err()
	}
	if a.rec.Status == lifecycle.Queued {
		// A queued start: cancelled, back to the status it came from.
		defer a.mu.Unlock()
		if err := e.cancelQueued(a, "stop: queued start cancelled"); err != nil {
			return nil, err
		}
		return e.snapshot(a), nil
	}
	if !a.rec.Status.Live() && a.restartTimer != nil {
		// Not running but about to be restarted by keep-alive: the stop
		// cancels that.
		e.cancelRestart(a)
		defer a.mu.Unlock()
		now := e.clock.Now().UTC()
		// It reads stopped (by the user), not as the failure it was waiting
		// to recover from.
		err := e.applyNow(a, step{to: lifecycle.Stopped, reason: "stop: keep-alive restart cancelled", mut: func(r *store.Record) {
			r.Desired, r.NextRestartAt = lifecycle.DesiredStopped, nil
			r.ExitReason, r.Error, r.StoppedAt = lifecycle.ReasonStoppedByUser, "", &now
		}})
		if err != nil {
			err = e.updateNow(a, func(r *store.Record) { r.Desired, r.NextRestartAt = lifecycle.DesiredStopped, nil })
		}
		return e.snapshot(a), err
	}
	if !a.rec.Status.Live() || a.run == nil {
		a.mu.Unlock()
		return nil, errNotRunning(a.rec.ID)
	}
	rn := a.run
	if rn.stopDone != nil {
		// Already stopping (a timeout, or another caller): wait for that.
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
	g := secs(a.rec.GraceSec)
	if grace != nil {
		g = *grace
	}
	done, err := e.beginStop(a, rn, "stop", syscall.SIGTERM)
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	e.finishStop(a, rn, done, asked.Add(g), lifecycle.ReasonStoppedByUser)
	a.mu.Lock()
	defer a.mu.Unlock()
	if rn.stopErr == nil && e.ctx.Err() != nil && a.rec.Status.Live() {
		return e.snapshot(a), errClosing()
	}
	return e.snapshot(a), rn.stopErr
}

// beginStop starts a stop of a running (or timed-out) agent: the first
// signal of the stop (first) goes to its group at once, then it moves to
// stopping, desired stopped, and the run is marked as being stopped. The
// signal comes before the write, and the write cannot hold the stop back:
// on a full disk the stop still stops (applyNow; the record is written when
// it can be). a.mu is held.
func (e *Engine) beginStop(a *agent, rn *run, reason string, first syscall.Signal) (chan struct{}, error) {
	if a.rec.Status != lifecycle.Stopping && a.rec.Status != lifecycle.Killing {
		if err := lifecycle.Check(a.rec.Status, lifecycle.Stopping); err != nil {
			return nil, newErr(ErrTransition, "Process '%s': %v", a.rec.ID, err)
		}
		if err := rn.p.Signal(first); err != nil && !errors.Is(err, syscall.ESRCH) { // gone already: the stop confirms it
			e.log.Warn().Err(err).Str("agent", a.rec.ID).Int("pid", rn.pid()).Str("signal", first.String()).Msg("cannot signal the agent's group")
		}
		rn.firstSent = true
		if err := e.applyNow(a, step{to: lifecycle.Stopping, reason: reason, mut: func(r *store.Record) { r.Desired = lifecycle.DesiredStopped }}); err != nil {
			return nil, err
		}
	}
	rn.stopDone = make(chan struct{})
	return rn.stopDone, nil
}

// finishStop signals the group and waits: TERM, until graceEnd (engine
// clock), KILL, then confirms the whole group is gone and records the run
// as stopped. It runs without a.mu and closes done at the end.
func (e *Engine) finishStop(a *agent, rn *run, done chan struct{}, graceEnd time.Time, reason lifecycle.ExitReason) {
	e.finishPlan(a, rn, done, stopPlan{
		steps: []proc.Step{{Signal: syscall.SIGTERM, Wait: graceEnd.Sub(e.clock.Now())}},
		to:    lifecycle.Stopped, reason: reason,
		mut: func(r *store.Record) {
			if reason != lifecycle.ReasonTimedOut {
				r.Error = ""
			}
		}})
}

// stopPlan is how a stop ends a run: the signals and waits before SIGKILL,
// and the status (stopped, paused) it records once the group is gone.
type stopPlan struct {
	steps  []proc.Step
	to     lifecycle.Status
	reason lifecycle.ExitReason
	mut    func(r *store.Record)
}

// finishPlan carries out a stop plan on a run marked as being stopped
// (beginStop): its signals, SIGKILL after the last wait, the confirmation
// that the whole group is gone, and the final status. It runs without a.mu
// and closes done at the end. If the engine closes meanwhile, the stop is
// left for the next engine (the record says stopping).
func (e *Engine) finishPlan(a *agent, rn *run, done chan struct{}, plan stopPlan) {
	defer close(done)
	signals := plan.steps
	if rn.firstSent && len(signals) > 0 {
		// beginStop sent the first signal already: its wait is what is left.
		signals = append([]proc.Step{{Wait: signals[0].Wait}}, signals[1:]...)
	}
	killed, gone := rn.p.Terminate(e.ctx, signals, func() {
		a.mu.Lock()
		if a.run == rn && a.rec.Status == lifecycle.Stopping {
			e.applyNow(a, step{to: lifecycle.Killing, reason: "grace elapsed"}) // a refusal is logged
		}
		a.mu.Unlock()
	})
	if e.ctx.Err() != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.run != rn {
		return
	}
	if !gone {
		rn.stopErr = errStopFailed(a.rec.ID, fmt.Sprintf("process group %d is still alive after SIGKILL", rn.pid()))
		e.updateNow(a, func(r *store.Record) { r.Error = rn.stopErr.Error() })
		return
	}
	now := e.clock.Now().UTC()
	var steps []step
	if killed && a.rec.Status == lifecycle.Stopping {
		// Killing and the end happened together: one write.
		steps = append(steps, step{to: lifecycle.Killing, reason: "grace elapsed"})
	}
	var fig store.RunFigures
	counted := false
	steps = append(steps, step{to: plan.to, reason: string(plan.reason), mut: func(r *store.Record) {
		r.ExitReason = plan.reason
		setExit(r, rn.p.Exit(), now)
		r.LastActivityAt = rn.activityAt()
		fig, counted = figures.Count(r, rn.resultNow(), now)
		if plan.mut != nil {
			plan.mut(r)
		}
	}})
	if err := e.applyNow(a, steps...); err != nil {
		rn.stopErr = err
		if a.gone() {
			e.endRun(a, rn)
		}
		return
	}
	if counted {
		e.runCounted(a, fig)
	}
	e.endRun(a, rn)
}

// StopAll stops every agent of a project that is live or would run again on
// its own (a pending keep-alive restart, a queued start).
func (e *Engine) StopAll(ctx context.Context, projectID string) ([]StopResult, error) {
	p, err := e.project(projectID)
	if err != nil {
		return nil, err
	}
	var todo []*agent
	for _, a := range p.list() {
		a.mu.Lock()
		if a.rec.Status.Live() || a.restartTimer != nil || a.rec.Status == lifecycle.Queued {
			todo = append(todo, a)
		}
		a.mu.Unlock()
	}
	res := make([]StopResult, len(todo))
	asked := e.clock.Now()
	var wg sync.WaitGroup
	for i, a := range todo {
		a.mu.Lock()
		id := a.rec.ID
		a.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := e.stop(ctx, a, nil, asked)
			res[i] = StopResult{AgentID: id, Record: r}
			if err != nil {
				res[i].Error = err.Error()
			}
		}()
	}
	wg.Wait()
	e.appendEvent(projectID, store.Event{Time: e.clock.Now().UTC(), Event: "stop-all", Data: map[string]any{"agents": len(todo)}})
	return res, nil
}
