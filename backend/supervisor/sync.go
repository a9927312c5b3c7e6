package supervisor

import (
	"context"
	"fmt"
	"sync"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/loganalysis"
	"shepherd/backend/procid"
	"shepherd/backend/store"
)

// SelectProject makes a project the selected one and runs the load-time
// sanity check over its agents, returning what it found.
func (e *Engine) SelectProject(ctx context.Context, id string) (*SyncSummary, error) {
	e.mu.Lock()
	p, ok := e.projects[id]
	e.mu.Unlock()
	if !ok {
		return nil, newErr(ErrProjectNotFound, "Project '%s' not found", id)
	}
	sum, err := e.load(p, true)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	prev := e.projects[e.selected]
	e.selected = id
	e.mu.Unlock()
	// Switching stops the old project's tickers (its agents keep running
	// and keep being watched for their exits) and starts the new one's.
	if prev != nil && prev != p {
		e.stopMonitor(prev)
	}
	e.startMonitor(p)
	return sum, nil
}

// LoadAll loads every known project: its records are checked against
// reality and its agents watched for their exits (the selected project also
// gets the watchdog and stale tickers). The app and `serve` call it at start
// so that no project's agents go unwatched until the user opens it.
func (e *Engine) LoadAll() {
	for _, info := range e.Projects() {
		if e.ctx.Err() != nil {
			return
		}
		if _, err := e.project(info.ID); err != nil {
			e.log.Error().Err(err).Str("project", info.ID).Msg("cannot load project")
		}
	}
}

// load reads a project's records (once) and syncs every agent with reality.
// What a load found that no select has reported yet (the project was loaded
// at start or by an API call) is kept, and the next select reports it: the
// user opening a project learns that two agents exited while the app was
// closed even though the engine noticed it earlier.
func (e *Engine) load(p *project, selecting bool) (*SyncSummary, error) {
	p.mu.Lock()
	first := !p.loaded
	if !p.loaded {
		recs, bad, err := e.st.LoadRecords(p.info.ID, e.clock.Now())
		if err != nil {
			p.mu.Unlock()
			return nil, err
		}
		for _, r := range recs {
			p.agents[r.ID] = &agent{rec: r}
		}
		p.settings = e.loadSettings(p.info.ID)
		for _, c := range bad {
			cr := CorruptRecord{AgentID: c.AgentID, MovedTo: c.MovedTo, Problem: c.Err.Error()}
			p.corrupt = append(p.corrupt, cr)
			e.log.Error().Str("project", p.info.ID).Str("agent", c.AgentID).Str("movedTo", c.MovedTo).
				Err(c.Err).Msg("corrupt record moved aside")
			e.appendEvent(p.info.ID, store.Event{Time: e.clock.Now().UTC(), Event: "record:corrupt", AgentID: c.AgentID,
				Reason: c.Err.Error(), Data: map[string]any{"movedTo": c.MovedTo}})
		}
		p.loaded = true
	}
	corrupt := append([]CorruptRecord(nil), p.corrupt...)
	p.mu.Unlock()

	sum := &SyncSummary{ProjectID: p.info.ID, Counts: map[string]int{}, Corrupt: corrupt}
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
		case !selecting && !quiet:
			if p.unreported == nil {
				p.unreported = map[string]AgentOutcome{}
			}
			p.unreported[out.AgentID] = out
		case selecting && quiet:
			if old, ok := p.unreported[out.AgentID]; ok {
				old.Status = out.Status
				outs[i] = old
			}
		}
	}
	if selecting {
		p.unreported = nil
	}
	p.mu.Unlock()
	for _, out := range outs {
		if out.Recovery != "" {
			sum.Counts["recovery_"+out.Recovery]++
		}
		sum.Agents = append(sum.Agents, out)
		sum.Counts[out.Outcome]++
	}
	for _, a := range agents {
		a.mu.Lock()
		if e.scheduleRestart(a) {
			sum.Counts[OutcomeKeepAlive]++
		}
		a.mu.Unlock()
	}
	for _, a := range agents {
		if !first {
			break // auto start is for the engine's first load of a project, not every switch
		}
		if out, ok := e.autoStart(a); ok {
			sum.Agents = append(sum.Agents, out)
			sum.Counts[out.Outcome]++
		}
	}
	if len(corrupt) > 0 {
		sum.Counts[OutcomeCorrupt] = len(corrupt)
	}
	sum.Total = len(agents)
	e.appendEvent(p.info.ID, store.Event{Time: e.clock.Now().UTC(), Event: "project:synced",
		Data: map[string]any{"counts": sum.Counts, "total": sum.Total}})
	e.log.Info().Str("project", p.info.ID).Int("agents", sum.Total).Interface("counts", sum.Counts).Msg("project synced")
	e.emit(EventProjectSynced, sum)
	return sum, nil
}

const syncWorkers = 8

// syncAndRecover syncs one agent and, if it was found dead, runs log
// analysis and recovery on it.
func (e *Engine) syncAndRecover(a *agent) AgentOutcome {
	out, st := e.syncAgent(a)
	switch out.Outcome {
	case OutcomeExitedWhileClosed, OutcomeUnknownExit, OutcomePIDReused, OutcomeOtherBoot:
		a.mu.Lock()
		out.Recovery = string(e.recoverDead(a, st))
		out.Status = string(a.rec.Status)
		a.mu.Unlock()
	}
	return out
}

// syncAgent makes one record true (SPEC "Project selection").
func (e *Engine) syncAgent(a *agent) (out AgentOutcome, exit *store.ExitStatus) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.rec
	out.AgentID = r.ID
	defer func() {
		out.Status = string(a.rec.Status)
		out.ExitCode = a.rec.ExitCode
	}()
	if !r.Status.Live() {
		out.Outcome = OutcomeUnchanged
		return out, nil
	}
	if a.run != nil {
		out.Outcome = OutcomeRunning
		return out, nil
	}
	// An engine that died between spawning and recording the pid left the
	// pid in run.json.
	if r.Status == lifecycle.Spawning && r.PID == 0 {
		if ri, _ := store.ReadRun(e.st.RunPath(r.ProjectID, r.ID)); ri != nil {
			st, _ := procid.StartTime(ri.PID)
			_ = e.update(a, func(n *store.Record) {
				n.PID, n.ShimPID, n.ProcessStartTime, n.BootID = ri.PID, ri.ShimPID, st, e.bootID
			})
			r = a.rec
		}
	}
	if r.PID == 0 {
		out.Outcome, out.Detail = OutcomeUnknownExit, "no process was recorded for this run"
		to := lifecycle.Interrupted
		if r.Status == lifecycle.Spawning {
			to = lifecycle.Failed
		}
		e.endWhileAway(a, to, lifecycle.ReasonExitedWhileAppClosed, nil, "Shepherd stopped before this run's process was recorded")
		return out, nil
	}
	if r.BootID != "" && r.BootID != e.bootID {
		out.Outcome, out.Detail = OutcomeOtherBoot, "the machine was restarted since this agent started"
		e.endWhileAway(a, lifecycle.Interrupted, lifecycle.ReasonExitedWhileAppClosed, nil,
			"The machine was restarted while the agent ran; its exit is unknown")
		return out, nil
	}
	switch c := procid.Compare(r.PID, r.ProcessStartTime); c {
	case procid.Same, procid.NoRecord:
		if c == procid.NoRecord {
			e.log.Warn().Str("agent", r.ID).Int("pid", r.PID).Msg("record has no process start time: identity checked by pid only")
		}
		out.Outcome = OutcomeReattached
		e.reattach(a)
	case procid.Reused:
		out.Outcome, out.Detail = OutcomePIDReused, fmt.Sprintf("pid %d now belongs to another process, left untouched", r.PID)
		e.endWhileAway(a, lifecycle.Interrupted, lifecycle.ReasonPIDReused, nil,
			fmt.Sprintf("pid %d was reused by another process; the agent's exit is unknown", r.PID))
	default: // gone
		st, err := store.ReadExit(e.st.ExitPath(r.ProjectID, r.ID))
		if err != nil {
			e.log.Warn().Err(err).Str("agent", r.ID).Msg("unreadable exit status")
		}
		if st != nil && st.PID == r.PID {
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

// endWhileAway records the end of a run that happened while no engine
// watched it. With an exit status the outcome follows it; an agent that was
// being stopped ends stopped. a.mu is held.
func (e *Engine) endWhileAway(a *agent, to lifecycle.Status, reason lifecycle.ExitReason, st *store.ExitStatus, msg string) {
	now := e.clock.Now().UTC()
	from := a.rec.Status
	if st != nil && to == "" {
		o := exitOutcome(st)
		to, msg = o.status, o.msg
	}
	switch from {
	case lifecycle.Stopping, lifecycle.Killing, lifecycle.TimedOut:
		// The stop it was under completed while we were away.
		if from == lifecycle.TimedOut {
			_ = e.apply(a, lifecycle.Stopping, "sync", nil)
		}
		to, reason, msg = lifecycle.Stopped, lifecycle.ReasonStoppedByUser, ""
		if a.rec.Error != "" && from == lifecycle.TimedOut {
			reason, msg = lifecycle.ReasonTimedOut, a.rec.Error
		}
	}
	clearPID := reason == lifecycle.ReasonExitedWhileAppClosed && st == nil && a.rec.BootID != "" && a.rec.BootID != e.bootID
	_ = e.apply(a, to, "sync: "+string(reason), func(r *store.Record) {
		r.ExitReason = reason
		r.Error = msg
		r.Attached = true
		setExit(r, st, now)
		if st == nil {
			r.ExitCode, r.Signal = nil, ""
		}
		if clearPID {
			r.PID, r.ProcessStartTime, r.ShimPID = 0, 0, 0
		}
	})
}

// reattach adopts a live process this engine did not start: it is watched
// for its exit, can be stopped, and its log tail keeps working. a.mu is held.
func (e *Engine) reattach(a *agent) {
	r := a.rec
	rn := &run{pid: r.PID, startTime: r.ProcessStartTime, shimPID: r.ShimPID, exited: make(chan struct{}),
		logOff: max(0, fileSize(r.LogPath)-loganalysis.TailBytes)}
	_ = e.update(a, func(n *store.Record) { n.Attached = false })
	if r.Status == lifecycle.Spawning {
		_ = e.apply(a, lifecycle.Running, "sync: re-attached", func(n *store.Record) {
			now := e.clock.Now().UTC()
			n.StartedAt = &now
		})
	}
	e.watchRun(a, rn)
	switch a.rec.Status {
	case lifecycle.TimedOut, lifecycle.Stopping, lifecycle.Killing:
		// The engine died in the middle of a stop: finish it.
		reason := lifecycle.ReasonStoppedByUser
		if a.rec.Status == lifecycle.TimedOut {
			reason = lifecycle.ReasonTimedOut
		}
		done, err := e.beginStop(a, rn, "sync: resume stop")
		if err == nil {
			go e.finishStop(a, rn, done, time.Now().Add(time.Duration(a.rec.GraceSec)*time.Second), reason)
		}
	}
}

// autoStart starts an autoStartOnRestore agent that is not running.
func (e *Engine) autoStart(a *agent) (AgentOutcome, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.rec.AutoStartOnRestore || a.rec.Status.Live() {
		return AgentOutcome{}, false
	}
	out := AgentOutcome{AgentID: a.rec.ID, Outcome: OutcomeAutoStarted}
	if err := e.startLocked(a, a.rec.Args, "auto start on restore", nil); err != nil {
		out.Detail = err.Error()
	}
	out.Status = string(a.rec.Status)
	return out, true
}
