package supervisor

import (
	"fmt"
	"sync"
	"syscall"

	"shepherd/backend/lifecycle"
	"shepherd/backend/loganalysis"
	"shepherd/backend/logtail"
	"shepherd/backend/proc"
	"shepherd/backend/procid"
	"shepherd/backend/shim"
	"shepherd/backend/store"
)

const syncWorkers = 8

// check syncs every agent of a loaded project with reality and runs
// recovery on those found dead. With report, what earlier checks found and
// no select reported is merged in (and then counts as reported); without,
// what this check finds is kept for the next report.
func (e *Engine) check(p *project, report bool) *SyncSummary {
	agents := p.list()
	// Agents are checked a few at a time: most of the work is waiting for
	// record writes, which overlap.
	outs := make([]AgentOutcome, len(agents))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(syncWorkers, len(agents)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				outs[i] = e.syncAndRecover(agents[i])
			}
		}()
	}
	for i := range agents {
		work <- i
	}
	close(work)
	wg.Wait()

	p.mu.Lock()
	for i, out := range outs {
		quiet := out.Outcome == OutcomeRunning || out.Outcome == OutcomeUnchanged
		switch {
		case !report && !quiet:
			if p.unreported == nil {
				p.unreported = map[string]AgentOutcome{}
			}
			p.unreported[out.AgentID] = out
		case report && quiet:
			if old, ok := p.unreported[out.AgentID]; ok {
				old.Status = out.Status
				outs[i] = old
			}
		}
	}
	if report {
		p.unreported = nil
	}
	corrupt := append([]CorruptRecord(nil), p.corrupt...)
	if report {
		p.corrupt = nil
	}
	p.mu.Unlock()

	sum := &SyncSummary{ProjectID: p.info.ID, Counts: map[string]int{}, Corrupt: corrupt}
	for _, out := range outs {
		if out.Recovery != "" {
			sum.Counts["recovery_"+out.Recovery]++
		}
		sum.Agents = append(sum.Agents, out)
		sum.Counts[out.Outcome]++
	}
	s := e.settingsOf(p.info.ID)
	for _, a := range agents {
		a.mu.Lock()
		e.expirePaused(a, s)
		// A report counts every restart pending, also those an earlier load
		// scheduled.
		if e.scheduleRestart(a) || report && a.restartTimer != nil {
			sum.Counts[OutcomeKeepAlive]++
		}
		a.mu.Unlock()
	}
	if len(corrupt) > 0 {
		sum.Counts[OutcomeCorrupt] = len(corrupt)
	}
	sum.Total = len(agents)
	return sum
}

// syncAndRecover syncs one agent and, if it was found dead, runs log
// analysis and recovery on it.
func (e *Engine) syncAndRecover(a *agent) AgentOutcome {
	a.mu.Lock()
	defer a.mu.Unlock()
	out, st := e.syncAgent(a)
	switch out.Outcome {
	case OutcomeExitedWhileClosed, OutcomeUnknownExit, OutcomePIDReused, OutcomeOtherBoot:
		out.Recovery = string(e.recoverDead(a, st))
	}
	out.Status = string(a.rec.Status)
	out.ExitCode = a.rec.ExitCode
	return out
}

// syncAgent makes one record true (SPEC "Project selection"). a.mu is held.
func (e *Engine) syncAgent(a *agent) (out AgentOutcome, exit *shim.ExitStatus) {
	r := a.rec
	out.AgentID = r.ID
	switch {
	case a.gone():
		out.Outcome = OutcomeUnchanged
		return out, nil
	case !r.Status.Live():
		out.Outcome = OutcomeUnchanged
		return out, nil
	case a.run != nil || a.starting != nil:
		out.Outcome = OutcomeRunning
		return out, nil
	}
	if r.BootID != "" && r.BootID != e.bootID {
		out.Outcome, out.Detail = OutcomeOtherBoot, "the machine was restarted since this agent started"
		e.endWhileAway(a, lifecycle.Interrupted, lifecycle.ReasonExitedWhileAppClosed, nil,
			"The machine was restarted while the agent ran; its exit is unknown")
		return out, nil
	}
	if r.PID == 0 && r.Status == lifecycle.Spawning {
		// The engine stopped between recording the shim and learning the
		// agent's pid: the shim's run file is the truth.
		ri := e.runner.AwaitRun(e.ctx, e.st.RunPath(r.ProjectID, r.ID), e.identity(r))
		if ri == nil {
			out.Outcome, out.Detail = OutcomeNeverStarted, "Shepherd stopped before this agent's process started; nothing ran"
			back := r.PreviousStatus
			if back == "" {
				back = lifecycle.NotStarted
			}
			e.applyNow(a, step{to: back, reason: "sync: spawn never happened", revert: true, mut: func(n *store.Record) {
				n.Error = out.Detail
				n.ShimPID, n.ShimStartTime, n.PreviousStatus = 0, 0, ""
			}})
			return out, nil
		}
		st, _ := procid.StartTime(ri.PID)
		e.updateNow(a, func(n *store.Record) { // what happened, kept in memory when the disk is full
			n.PID, n.ShimPID, n.ProcessStartTime, n.BootID = ri.PID, ri.ShimPID, st, e.bootID
			t := ri.StartedAt.UTC()
			n.StartedAt = &t
		})
		r = a.rec
	}
	if r.PID == 0 {
		out.Outcome, out.Detail = OutcomeUnknownExit, "no process was recorded for this run"
		e.endWhileAway(a, lifecycle.Interrupted, lifecycle.ReasonExitedWhileAppClosed, nil, "Shepherd stopped before this run's process was recorded")
		return out, nil
	}
	switch c := procid.Compare(r.PID, r.ProcessStartTime); c {
	case procid.Same, procid.NoRecord:
		if c == procid.NoRecord {
			e.log.Warn().Str("agent", r.ID).Int("pid", r.PID).Msg("record has no process start time: identity checked by pid only")
		}
		out.Outcome = OutcomeReattached
		e.reattach(a)
		e.appendEvent(r.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "reattached", AgentID: r.ID,
			Data: map[string]any{"pid": r.PID}})
	case procid.Reused:
		out.Outcome, out.Detail = OutcomePIDReused, fmt.Sprintf("pid %d now belongs to another process, left untouched", r.PID)
		e.endWhileAway(a, lifecycle.Interrupted, lifecycle.ReasonPIDReused, nil,
			fmt.Sprintf("pid %d was reused by another process; the agent's exit is unknown", r.PID))
	default: // gone: its shim, while it lives, is writing how it ended
		st := e.runner.AwaitExit(e.ctx, e.identity(r))
		if st != nil {
			out.Outcome = OutcomeExitedWhileClosed
			exit = st
			e.endWhileAway(a, "", lifecycle.ReasonExitedWhileAppClosed, st, "")
		} else {
			out.Outcome = OutcomeUnknownExit
			e.endWhileAway(a, lifecycle.Interrupted, lifecycle.ReasonExitedWhileAppClosed, nil,
				"Exited while Shepherd was closed; reason unknown")
		}
	}
	return out, exit
}

// identity is what the record says of its process and shim.
func (e *Engine) identity(r *store.Record) proc.Identity {
	return proc.Identity{PID: r.PID, StartTime: r.ProcessStartTime, ShimPID: r.ShimPID, ShimStartTime: r.ShimStartTime,
		ExitFile: e.st.ExitPath(r.ProjectID, r.ID)}
}

// endWhileAway records the end of a run that happened while no engine
// watched it. With an exit status the outcome follows it; an agent that was
// being stopped ends stopped. a.mu is held.
func (e *Engine) endWhileAway(a *agent, to lifecycle.Status, reason lifecycle.ExitReason, st *shim.ExitStatus, msg string) {
	now := e.clock.Now().UTC()
	from := a.rec.Status
	// Its shim may still be stopping what the run left in its group.
	defer e.holdSlotWhileShimLives(a, a.rec.ShimPID, a.rec.ShimStartTime)
	if st != nil && to == "" {
		o := exitOutcome(st)
		to, msg = o.status, o.msg
		if from == lifecycle.Running && e.endBudgetWhileAway(a, st, now) {
			return // its run ended on a budget it reached: paused, as if it had been watched
		}
	}
	var steps []step
	switch from {
	case lifecycle.Spawning:
		// It did start (its pid is known): record that first.
		steps = append(steps, step{to: lifecycle.Running, reason: "sync: started while away"})
	case lifecycle.Stopping, lifecycle.Killing, lifecycle.TimedOut:
		// The stop it was under completed while we were away.
		if from == lifecycle.TimedOut {
			steps = append(steps, step{to: lifecycle.Stopping, reason: "sync"})
		}
		to, reason, msg = lifecycle.Stopped, lifecycle.ReasonStoppedByUser, ""
		if a.rec.Error != "" && from == lifecycle.TimedOut {
			reason, msg = lifecycle.ReasonTimedOut, a.rec.Error
		}
	}
	clearPID := reason == lifecycle.ReasonExitedWhileAppClosed && st == nil && a.rec.BootID != "" && a.rec.BootID != e.bootID
	steps = append(steps, step{to: to, reason: "sync: " + string(reason), mut: func(r *store.Record) {
		r.ExitReason = reason
		r.Error = msg
		r.Attached = true
		r.PreviousStatus = ""
		setExit(r, st, now)
		if st == nil {
			r.ExitCode, r.Signal = nil, ""
		}
		if clearPID {
			r.PID, r.ProcessStartTime, r.ShimPID, r.ShimStartTime = 0, 0, 0, 0
		}
	}})
	e.applyNow(a, steps...) // what happened while away, kept in memory when the disk is full; a refusal is logged
}

// reattach adopts a live process this engine did not start: it is watched
// for its exit, can be stopped, and its log tail keeps working. a.mu is held.
func (e *Engine) reattach(a *agent) {
	r := a.rec
	rn := newRun(e.runner.Attach(e.identity(r)))
	rn.logSize = logtail.Size(r.LogPath)
	rn.logOff = max(0, rn.logSize-loganalysis.TailBytes)
	var steps []step
	if r.Status == lifecycle.Spawning {
		steps = append(steps, step{to: lifecycle.Running, reason: "sync: re-attached", mut: func(n *store.Record) {
			n.Attached, n.PreviousStatus = false, ""
			if n.StartedAt == nil {
				now := e.clock.Now().UTC()
				n.StartedAt = &now
			}
		}})
		if e.applySteps(a, steps...) != nil {
			return
		}
	} else if e.update(a, func(n *store.Record) { n.Attached = false }) != nil {
		return
	}
	e.watchRun(a, rn)
	switch a.rec.Status {
	case lifecycle.TimedOut, lifecycle.Stopping, lifecycle.Killing:
		// The engine died in the middle of a stop: finish it.
		reason := lifecycle.ReasonStoppedByUser
		if a.rec.Status == lifecycle.TimedOut {
			reason = lifecycle.ReasonTimedOut
		}
		done, err := e.beginStop(a, rn, "sync: resume stop", syscall.SIGTERM)
		if err == nil {
			graceEnd := e.clock.Now().Add(secs(a.rec.GraceSec))
			if !e.goTask(func() { e.finishStop(a, rn, done, graceEnd, reason) }) {
				close(done)
			}
		}
	}
}

// autoStart starts an autoStartOnRestore agent that is not running.
func (e *Engine) autoStart(a *agent) (AgentOutcome, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.rec.AutoStartOnRestore || a.rec.Status.Live() || a.gone() {
		return AgentOutcome{}, false
	}
	out := AgentOutcome{AgentID: a.rec.ID, Outcome: OutcomeAutoStarted}
	if err := e.launch(a, actAutoStart); err != nil {
		out.Detail = err.Error()
	}
	out.Status = string(a.rec.Status)
	return out, true
}
