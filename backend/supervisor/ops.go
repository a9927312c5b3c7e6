package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/loganalysis"
	"shepherd/backend/store"
)

// validateSpec checks spec and fills its defaults (cwd: the project folder,
// profile generic, grace 10 s). Errors name the agent and what was wrong.
func validateSpec(p *project, spec *AgentSpec) error {
	if err := store.ValidID(spec.ID); err != nil {
		return newErr(ErrValidation, "agent %v", err)
	}
	if strings.TrimSpace(spec.Command) == "" {
		return newErr(ErrValidation, "agent '%s': command is empty", spec.ID)
	}
	if spec.Cwd == "" {
		spec.Cwd = p.info.Path
	}
	if !filepath.IsAbs(spec.Cwd) {
		spec.Cwd = filepath.Join(p.info.Path, spec.Cwd)
	}
	spec.Cwd = filepath.Clean(spec.Cwd)
	if err := checkDir(spec.Cwd); err != nil {
		return newErr(ErrValidation, "agent '%s': cwd %v", spec.ID, err)
	}
	switch spec.Profile {
	case "":
		spec.Profile = store.ProfileGeneric
	case store.ProfileGeneric, store.ProfileClaudeJSON:
	default:
		return newErr(ErrValidation, "agent '%s': unknown profile %q (use %q or %q)",
			spec.ID, spec.Profile, store.ProfileGeneric, store.ProfileClaudeJSON)
	}
	prof := loganalysis.Profile{Name: spec.Profile, CompletionPattern: spec.CompletionPattern, ErrorPattern: spec.ErrorPattern}
	if err := prof.Validate(); err != nil {
		return newErr(ErrValidation, "agent '%s': %v", spec.ID, err)
	}
	if spec.TimeoutSec < 0 {
		return newErr(ErrValidation, "agent '%s': timeoutSec must be 0 (none) or positive, not %d", spec.ID, spec.TimeoutSec)
	}
	if spec.GraceSec < 0 || spec.GraceSec > 3600 {
		return newErr(ErrValidation, "agent '%s': graceSec must be between 0 (default %d) and 3600, not %d", spec.ID, store.DefaultGraceSec, spec.GraceSec)
	}
	if spec.GraceSec == 0 {
		spec.GraceSec = store.DefaultGraceSec
	}
	for k := range spec.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return newErr(ErrValidation, "agent '%s': environment variable name %q is not valid", spec.ID, k)
		}
	}
	return nil
}

// applySpec copies the user-set fields of spec into r.
func applySpec(r *store.Record, spec AgentSpec) {
	r.Name, r.Command, r.Args, r.Env, r.Cwd = spec.Name, spec.Command, append([]string{}, spec.Args...), spec.Env, spec.Cwd
	r.Profile, r.ResumeArgs = spec.Profile, spec.ResumeArgs
	r.CompletionPattern, r.ErrorPattern = spec.CompletionPattern, spec.ErrorPattern
	r.KeepAlive, r.AutoStartOnRestore = spec.KeepAlive, spec.AutoStartOnRestore
	r.TimeoutSec, r.GraceSec, r.StaleCheck = spec.TimeoutSec, spec.GraceSec, spec.StaleCheck
}

// CreateAgent validates spec and writes a new not_started record. Nothing is
// written when spec is invalid or the id is taken.
func (e *Engine) CreateAgent(projectID string, spec AgentSpec) (*store.Record, error) {
	p, err := e.project(projectID)
	if err != nil {
		return nil, err
	}
	if err := validateSpec(p, &spec); err != nil {
		return nil, err
	}
	now := e.clock.Now().UTC()
	rec := &store.Record{ID: spec.ID, ProjectID: projectID, Status: lifecycle.NotStarted,
		Desired: lifecycle.DesiredStopped, Attached: true, CreatedAt: now, LogPath: e.st.LogPath(projectID, spec.ID)}
	applySpec(rec, spec)
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.agents[spec.ID]; ok {
		return nil, errAlreadyExists(spec.ID)
	}
	if err := e.st.SaveRecord(rec); err != nil {
		return nil, fmt.Errorf("write record of '%s': %w", spec.ID, err)
	}
	a := &agent{rec: rec}
	p.agents[spec.ID] = a
	e.appendEvent(projectID, store.Event{Time: now, Event: "created", AgentID: spec.ID, To: string(lifecycle.NotStarted)})
	e.log.Info().Str("project", projectID).Str("agent", spec.ID).Str("command", spec.Command).Msg("agent created")
	snap := rec.Clone()
	e.emit(EventAgentState, snap)
	return snap, nil
}

// UpdateAgent changes the user-set fields of an agent that is not live.
func (e *Engine) UpdateAgent(projectID string, spec AgentSpec) (*store.Record, error) {
	p, a, err := e.agent(projectID, spec.ID)
	if err != nil {
		return nil, err
	}
	if err := validateSpec(p, &spec); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rec.Status.Live() {
		return nil, newErr(ErrIsRunning, "Process is running. Stop it before editing.")
	}
	if err := e.update(a, func(r *store.Record) { applySpec(r, spec) }); err != nil {
		return nil, err
	}
	e.appendEvent(projectID, store.Event{Time: e.clock.Now().UTC(), Event: "updated", AgentID: spec.ID})
	return e.snapshot(a), nil
}

// StartAgent starts a not-live agent with its args. Of two concurrent starts
// of one agent exactly one succeeds; the other gets ProcessAlreadyRunning.
func (e *Engine) StartAgent(ctx context.Context, projectID, agentID string) (*store.Record, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := e.startLocked(a, a.rec.Args, "start", func(r *store.Record) { r.AutoResumeCount = 0 }); err != nil {
		return nil, err
	}
	return e.snapshot(a), nil
}

// startLocked spawns a run of a with args. a.mu is held.
func (e *Engine) startLocked(a *agent, args []string, reason string, mut func(r *store.Record)) error {
	id := a.rec.ID
	if a.rec.Status.Live() {
		return errAlreadyRunning(id)
	}
	prev := a.rec.Status
	if err := e.apply(a, lifecycle.Spawning, reason, func(r *store.Record) { r.Desired = lifecycle.DesiredRunning }); err != nil {
		return err
	}
	now := e.clock.Now().UTC()
	e.cancelRestart(a)
	logStart := fileSize(a.rec.LogPath)
	rn, err := e.spawn(a.rec, args)
	if err != nil {
		msg := errStartFailed(id, err)
		if aerr := e.apply(a, prev, "spawn failed", func(r *store.Record) { r.Error = msg.Error() }); aerr != nil {
			e.log.Error().Err(aerr).Str("agent", id).Msg("cannot restore status after failed spawn")
		}
		return msg
	}
	err = e.apply(a, lifecycle.Running, reason, func(r *store.Record) {
		r.PID, r.ProcessStartTime, r.ShimPID, r.BootID = rn.pid, rn.startTime, rn.shimPID, e.bootID
		r.Attached = true
		r.StartedAt, r.StoppedAt, r.LastActivityAt = &now, nil, &now
		r.ExitCode, r.Signal, r.ExitReason, r.Error, r.Stale = nil, "", "", "", false
		if mut != nil {
			mut(r)
		}
	})
	if err != nil {
		// The process runs but its record could not be written: stop it
		// rather than leave an agent no record knows of.
		_ = syscall.Kill(-rn.pid, syscall.SIGKILL)
		return errStartFailed(id, err)
	}
	rn.logOff = logStart
	e.watchRun(a, rn)
	e.armStable(a, rn)
	return nil
}

func fileSize(path string) int64 {
	if fi, err := os.Stat(path); err == nil {
		return fi.Size()
	}
	return 0
}

// watchRun adopts rn as a's live run: arms its timeout and waits for its
// exit (layer 1). a.mu is held.
func (e *Engine) watchRun(a *agent, rn *run) {
	a.run = rn
	if t := a.rec.TimeoutSec; t > 0 && a.rec.Status == lifecycle.Running {
		left := time.Duration(t) * time.Second
		if a.rec.StartedAt != nil {
			left -= e.clock.Since(*a.rec.StartedAt)
		}
		if left < 0 {
			left = 0
		}
		rn.timer = e.clock.AfterFunc(left, func() { e.onTimeout(a, rn) })
	}
	e.watchers.Add(1)
	go e.watchExit(a, rn)
	if a.rec.Profile == store.ProfileClaudeJSON {
		rn.scanner = loganalysis.NewScanner(profileOf(a.rec))
		if rn.status == nil && rn.logOff > 0 {
			// Re-attached: reading starts inside the log, maybe mid-line.
			rn.scanner.SkipToNextLine()
		}
		e.watchers.Add(1)
		go e.followLog(a, rn)
	}
}

// onTimeout is layer 2: running past timeoutSec → timed_out → graceful stop.
func (e *Engine) onTimeout(a *agent, rn *run) {
	a.mu.Lock()
	if a.run != rn || a.rec.Status != lifecycle.Running {
		a.mu.Unlock()
		return
	}
	t := a.rec.TimeoutSec
	if err := e.apply(a, lifecycle.TimedOut, "timeout", func(r *store.Record) {
		r.Desired = lifecycle.DesiredStopped
		r.Error = fmt.Sprintf("Timed out after %d s", t)
	}); err != nil {
		a.mu.Unlock()
		return
	}
	e.appendEvent(a.rec.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "auto-execution:timeout",
		AgentID: a.rec.ID, Data: map[string]any{"timeoutSec": t, "pid": rn.pid}})
	graceEnd := time.Now().Add(time.Duration(a.rec.GraceSec) * time.Second)
	done, err := e.beginStop(a, rn, "timeout")
	a.mu.Unlock()
	if err == nil {
		e.finishStop(a, rn, done, graceEnd, lifecycle.ReasonTimedOut)
	}
}

// StopAgent stops a live agent: SIGTERM to its group, grace (nil: the
// agent's graceSec), SIGKILL, and confirms the group is gone.
func (e *Engine) StopAgent(ctx context.Context, projectID, agentID string, grace *time.Duration) (*store.Record, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	return e.stop(ctx, a, grace, time.Now())
}

// stop stops a's run. The grace is counted from asked, the moment the stop
// was requested, so that stopping many agents at once takes the grace and
// not the grace plus the time to record every one of them.
func (e *Engine) stop(ctx context.Context, a *agent, grace *time.Duration, asked time.Time) (*store.Record, error) {
	a.mu.Lock()
	if !a.rec.Status.Live() && a.restartTimer != nil {
		// Not running but about to be restarted by keep-alive: the stop
		// cancels that.
		e.cancelRestart(a)
		err := e.update(a, func(r *store.Record) { r.Desired, r.NextRestartAt = lifecycle.DesiredStopped, nil })
		defer a.mu.Unlock()
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
	g := time.Duration(a.rec.GraceSec) * time.Second
	if grace != nil {
		g = *grace
	}
	done, err := e.beginStop(a, rn, "stop")
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	e.finishStop(a, rn, done, asked.Add(g), lifecycle.ReasonStoppedByUser)
	a.mu.Lock()
	defer a.mu.Unlock()
	return e.snapshot(a), rn.stopErr
}

// beginStop moves a running (or timed-out) agent to stopping, desired
// stopped (one write, made before any signal, so that an engine that dies
// now still knows the stop was meant), and marks the run as being stopped.
// a.mu is held.
func (e *Engine) beginStop(a *agent, rn *run, reason string) (chan struct{}, error) {
	if a.rec.Status != lifecycle.Stopping && a.rec.Status != lifecycle.Killing {
		if err := e.apply(a, lifecycle.Stopping, reason, func(r *store.Record) { r.Desired = lifecycle.DesiredStopped }); err != nil {
			return nil, err
		}
	}
	rn.stopDone = make(chan struct{})
	return rn.stopDone, nil
}

// finishStop signals the group and waits: TERM, until graceEnd, KILL, then
// confirms the whole group is gone and records the final status. It runs
// without a.mu and closes done at the end.
func (e *Engine) finishStop(a *agent, rn *run, done chan struct{}, graceEnd time.Time, reason lifecycle.ExitReason) {
	defer close(done)
	pgid := rn.pid
	_ = signalGroup(pgid, syscall.SIGTERM)
	gone := e.waitGone(rn, time.Until(graceEnd))
	killed := false
	if !gone {
		// Kill first, record after: the write must not delay the kill, and
		// an engine that dies in between finds the group gone anyway. A
		// group is usually gone within milliseconds of SIGKILL; then killing
		// and stopped are recorded with one write (applySteps).
		_ = signalGroup(pgid, syscall.SIGKILL)
		killed = true
		gone = e.waitGone(rn, min(e.cfg.KillConfirm, 100*time.Millisecond))
		if !gone {
			a.mu.Lock()
			if a.rec.Status == lifecycle.Stopping {
				_ = e.apply(a, lifecycle.Killing, "grace elapsed", nil)
			}
			a.mu.Unlock()
			gone = e.waitGone(rn, e.cfg.KillConfirm)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.run != rn {
		return
	}
	if !gone {
		rn.stopErr = errStopFailed(a.rec.ID, fmt.Sprintf("process group %d is still alive after SIGKILL", pgid))
		_ = e.update(a, func(r *store.Record) { r.Error = rn.stopErr.Error() })
		return
	}
	stopTimers(rn)
	now := e.clock.Now().UTC()
	var steps []step
	if killed && a.rec.Status == lifecycle.Stopping {
		steps = append(steps, step{lifecycle.Killing, "grace elapsed", nil})
	}
	steps = append(steps, step{lifecycle.Stopped, string(reason), func(r *store.Record) {
		r.ExitReason = reason
		setExit(r, rn.exit, now)
		if reason != lifecycle.ReasonTimedOut {
			r.Error = ""
		}
	}})
	err := e.applySteps(a, steps...)
	if err != nil {
		rn.stopErr = err
		return
	}
	a.run = nil
}

// waitGone waits up to d for the run's exit to be handled and its whole
// process group to be gone. Nothing polls while the main process lives; after
// its exit, the group is checked with a short backoff while the shim reaps
// what is left.
func (e *Engine) waitGone(rn *run, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-rn.exited:
	case <-timer.C:
		return false
	}
	// Members that are only zombies about to be reaped make the group
	// exist for a moment; the exact check, which lists every process, is
	// kept for a group that lingers.
	exact := time.Now().Add(50 * time.Millisecond)
	for wait := time.Millisecond; ; wait = min(2*wait, 20*time.Millisecond) {
		if !e.groupAlive(rn.pid, false) || time.Now().After(exact) && !e.groupAlive(rn.pid, true) {
			return true
		}
		select {
		case <-timer.C:
			return false
		case <-time.After(wait):
		}
	}
}

// setExit copies a shim's exit status into a record.
func setExit(r *store.Record, st *store.ExitStatus, fallback time.Time) {
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

// StopAll stops every live agent of a project at once.
func (e *Engine) StopAll(ctx context.Context, projectID string) ([]StopResult, error) {
	p, err := e.project(projectID)
	if err != nil {
		return nil, err
	}
	var live []*agent
	for _, a := range p.list() {
		a.mu.Lock()
		if a.rec.Status.Live() {
			live = append(live, a)
		}
		a.mu.Unlock()
	}
	res := make([]StopResult, len(live))
	asked := time.Now()
	var wg sync.WaitGroup
	for i, a := range live {
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
	e.appendEvent(projectID, store.Event{Time: e.clock.Now().UTC(), Event: "stop-all", Data: map[string]any{"agents": len(live)}})
	return res, nil
}

// RemoveAgent forgets an agent. A live agent needs force, which stops it
// first. The log is kept unless deleteLog.
func (e *Engine) RemoveAgent(ctx context.Context, projectID, agentID string, force, deleteLog bool) error {
	p, a, err := e.agent(projectID, agentID)
	if err != nil {
		return err
	}
	a.mu.Lock()
	live := a.rec.Status.Live()
	a.mu.Unlock()
	if live {
		if !force {
			return newErr(ErrIsRunning, "Process is running. Stop it before removing.")
		}
		if _, err := e.stop(ctx, a, nil, time.Now()); err != nil && !isKind(err, ErrNotRunning) {
			return err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rec.Status.Live() {
		return newErr(ErrIsRunning, "Process is running. Stop it before removing.")
	}
	e.cancelRestart(a)
	if err := e.st.RemoveAgent(projectID, agentID, !deleteLog); err != nil {
		return fmt.Errorf("remove agent '%s': %w", agentID, err)
	}
	p.mu.Lock()
	delete(p.agents, agentID)
	p.mu.Unlock()
	e.appendEvent(projectID, store.Event{Time: e.clock.Now().UTC(), Event: "removed", AgentID: agentID,
		From: string(a.rec.Status), Data: map[string]any{"logDeleted": deleteLog}})
	e.log.Info().Str("project", projectID).Str("agent", agentID).Bool("logDeleted", deleteLog).Msg("agent removed")
	e.emit(EventAgentRemoved, AgentRef{ProjectID: projectID, AgentID: agentID})
	return nil
}

// LogTail returns the last n lines of an agent's log (n <= 0: 1000).
func (e *Engine) LogTail(projectID, agentID string, n int) ([]byte, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	path := a.rec.LogPath
	a.mu.Unlock()
	if n <= 0 {
		n = 1000
	}
	b, err := tailLines(path, n, 16<<20)
	if os.IsNotExist(err) {
		return nil, nil
	}
	return b, err
}
