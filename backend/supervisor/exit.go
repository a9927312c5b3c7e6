package supervisor

import (
	"context"
	"fmt"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/notify"
	"shepherd/backend/proc"
	"shepherd/backend/procid"
	"shepherd/backend/shim"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/figures"
)

// watchExit is layer 1: it waits for the agent's process to end (the shim's
// status pipe, or a pidfd / kqueue for a re-attached one, wakes it at once),
// records the end, and reaps the shim.
//
// The run keeps its slot of the run queue until its shim has ended: an agent
// that exits leaving processes in its group (a server it started, a
// grandchild that ignores SIGTERM) still uses the machine while the shim
// stops them, for up to its grace.
func (e *Engine) watchExit(a *agent, rn *run) {
	st, err := rn.p.Wait(e.ctx)
	if err != nil {
		return // the engine is closing; the next one re-attaches
	}
	release := e.holdSlot(a.p)
	e.onExit(a, rn, st)
	e.waitShimEnd(a, rn.p.ShimPID, rn.p.ShimStartTime)
	rn.p.Reap(e.ctx)
	release()
}

// holdSlotWhileShimLives keeps a slot of a's project for a run found ended
// (at load) whose shim still lives: it is stopping what the run left in its
// group. a.mu is held.
func (e *Engine) holdSlotWhileShimLives(a *agent, shimPID int, shimStart int64) {
	if shimPID <= 0 || shimStart == 0 || procid.Compare(shimPID, shimStart) != procid.Same {
		return
	}
	release := e.holdSlot(a.p)
	if !e.goTask(func() {
		e.waitShimEnd(a, shimPID, shimStart)
		release()
	}) {
		release()
	}
}

// holdSlot takes one slot of p's run queue; the func it returns gives the
// slot back, to the queue.
func (e *Engine) holdSlot(p *project) (release func()) { return e.queues.Drain(&p.q) }

// waitShimEnd waits until a's shim has ended, bounded by the time a shim
// takes at most to stop the agent's leftovers (its grace, then a few
// seconds of SIGKILL), on the engine's clock.
func (e *Engine) waitShimEnd(a *agent, shimPID int, shimStart int64) {
	a.mu.Lock()
	bound := secs(a.rec.GraceSec) + shimCleanupSlack
	a.mu.Unlock()
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	t := e.clock.AfterFunc(bound, cancel)
	defer t.Stop()
	proc.WaitShim(ctx, shimPID, shimStart)
}

// shimCleanupSlack is what the shim may take beyond the grace to SIGKILL and
// reap what the agent left.
const shimCleanupSlack = 6 * time.Second

// onExit records the end of a run the engine saw itself (layer 1). A run
// being stopped is finished by the stopper. Otherwise the run is judged by
// the outcome the engine forced on it (result grace, stale recovery), else —
// for claude-stream-json agents — by its result line when there is one, else
// by its exit code.
func (e *Engine) onExit(a *agent, rn *run, st *shim.ExitStatus) {
	e.scanLog(a, rn) // the last lines, written just before the exit
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.run != rn {
		return // another path recorded it
	}
	if a.gone() {
		e.endRun(a, rn)
		return
	}
	if a.rec.Status != lifecycle.Running {
		return // stopping, killing, timed out: finishStop completes it
	}
	rn.stopTimers()
	now := e.clock.Now().UTC()
	if res := rn.resultNow(); res != nil && rn.judged != res {
		// Read by the log's watch, which then lost the race for a.mu to
		// this end: judged here (a budget it reached pauses the run).
		e.sawResult(a, rn, res)
	}
	o := rn.forced
	if o == nil {
		o = rn.endOutcome()
	}
	if o == nil {
		o = exitOutcome(st)
	}
	if o.status == lifecycle.Paused {
		e.endBudgetRun(a, rn, func(r *store.Record) { setExit(r, st, now) })
		return
	}
	if l, ok := e.usageLimitOf(a.rec, now); ok && o.status == lifecycle.Failed && rn.forced == nil &&
		e.settingsOf(a.rec.ProjectID).UsageLimitWait && e.endUsageRun(a, rn, st, l) {
		return // paused until the reset (usage.go)
	}
	var fig store.RunFigures
	counted := false
	// The run has ended whether or not its record can be written now.
	err := e.applyNow(a, step{to: o.status, reason: "exit", mut: func(r *store.Record) {
		r.ExitReason, r.Error = o.reason, o.msg
		setExit(r, st, now)
		r.LastActivityAt = rn.activityAt()
		fig, counted = figures.Count(r, rn.resultNow(), now)
	}})
	if err != nil {
		return // the watchdog finds the run gone and records it
	}
	if counted {
		e.runCounted(a, fig)
	}
	e.endRun(a, rn)
	s := e.settingsOf(a.rec.ProjectID)
	switch {
	case o.status == lifecycle.Failed && rn.forced == nil && a.rec.AcknowledgedAt == nil:
		// (A crash of a loop the user acknowledged stays quiet.)
		e.notifyFailed(a, s)
	case o.status == lifecycle.Completed && s.NotifyCompletion:
		e.notify(notify.Notification{Level: notify.Success, Kind: notify.KindCompleted, Title: "Agent completed",
			ProjectID: a.rec.ProjectID, AgentID: a.rec.ID, Native: s.NotifyNative, Message: "Agent completed: " + a.rec.ID})
	}
	if rn.forced == nil {
		e.scheduleRestart(a)
	}
}

// exitOutcome judges a run by its exit code or signal.
func exitOutcome(st *shim.ExitStatus) *outcome {
	switch {
	case st == nil:
		return &outcome{lifecycle.Interrupted, lifecycle.ReasonUnknown,
			"Process ended but its exit status could not be read (its shim was killed)"}
	case st.ExitCode != nil && *st.ExitCode == 0:
		return &outcome{lifecycle.Completed, lifecycle.ReasonCompleted, ""}
	case st.ExitCode != nil:
		return &outcome{lifecycle.Failed, lifecycle.ReasonFailed, fmt.Sprintf("Process exited with code %d", *st.ExitCode)}
	case st.Signal != "":
		return &outcome{lifecycle.Failed, lifecycle.ReasonCrashed, fmt.Sprintf("Process was killed by %s", st.Signal)}
	default:
		return &outcome{lifecycle.Interrupted, lifecycle.ReasonUnknown,
			"Process ended but its shim could not tell how (it was no longer its child)"}
	}
}

// setExit copies a shim's exit status into a record.
func setExit(r *store.Record, st *shim.ExitStatus, fallback time.Time) {
	r.StoppedAt = &fallback
	if st == nil {
		return
	}
	at := st.ExitedAt.UTC()
	if !at.IsZero() {
		r.StoppedAt = &at
	}
	r.ExitCode = st.ExitCode
	r.Signal = st.Signal
}
