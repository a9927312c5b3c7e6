package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/loganalysis"
	"shepherd/backend/logtail"
	"shepherd/backend/proc"
	"shepherd/backend/sandbox"
	"shepherd/backend/store"
)

// StartAgent starts a not-live agent with its args. Of two concurrent starts
// of one agent exactly one succeeds; the other gets ProcessAlreadyRunning.
func (e *Engine) StartAgent(ctx context.Context, projectID, agentID string) (*store.Record, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := e.prestart(ctx, a, "start"); err != nil {
		return nil, err
	}
	if err := e.launch(a, actStart); err != nil {
		return nil, err
	}
	return e.snapshot(a), nil
}

// startLocked spawns a run of a with args. a.mu is held; it is let go
// while processes are started and waited for, and held again on return.
//
// The order makes a lost agent impossible: the shim is started first and
// waits; the record is written (spawning, with the shim's pid and start
// time); only then may the shim start the agent. An engine that dies before
// the write leaves a shim that ends on its own, starting nothing; one that
// dies after it leaves a record that leads to the shim, whose run file
// names the agent.
//
// No lock is held across process work — resolving the command, the
// sandbox's checks (its first probe starts a shim), starting the shim, and
// waiting for its hello (up to proc.HelloTimeout): a look at the agent and
// the monitor's passes never wait for a start. Meanwhile a.starting keeps a
// second start out and makes a stop, a pause, an edit or a remove of the
// agent wait for this start's end (awaitStart).
func (e *Engine) startLocked(a *agent, args []string, reason string, mut func(r *store.Record)) error {
	id := a.rec.ID
	if a.gone() {
		return errGone(id)
	}
	if a.rec.Status.Live() || a.starting != nil {
		return errAlreadyRunning(id)
	}
	if err := lifecycle.Check(a.rec.Status, lifecycle.Spawning); err != nil {
		return newErr(ErrTransition, "Process '%s': %v", id, err)
	}
	logStart := logtail.Size(a.rec.LogPath) // this run's lines start here (offsets count across rotations)
	token, credHash, err := newCredential()
	if err != nil {
		return e.startFailed(a, err)
	}
	done := make(chan struct{})
	a.starting = done
	defer func() { // a.mu is held at every return
		a.starting = nil
		close(done)
	}()
	rec := a.rec.Clone()
	a.mu.Unlock()
	spec, specErr := e.procSpec(rec, args, token)
	var pend *proc.Pending
	if specErr == nil {
		pend, err = e.runner.Prepare(spec)
	}
	a.mu.Lock()
	if specErr != nil {
		return e.startFailed(a, specErr) // a refused start leaves a pending keep-alive restart as it was
	}
	e.cancelRestart(a)
	if err != nil {
		return e.startFailed(a, err)
	}
	if a.gone() || a.rec.Status != rec.Status {
		// Removed, or moved by another path (a budget's answer) while the
		// shim started: that path has the last word.
		pend.Abort()
		if a.gone() {
			return errGone(id)
		}
		return newErr(ErrTransition, "Process '%s' became %s while it was being started; not started", id, a.rec.Status)
	}
	// A failed spawn goes back to where the agent was before; a queued
	// start, to where it was before it was queued.
	prev := a.rec.Status
	if prev == lifecycle.Queued {
		prev = a.rec.QueuedFrom
		if prev == "" {
			prev = lifecycle.NotStarted
		}
	}
	err = e.apply(a, lifecycle.Spawning, reason, func(r *store.Record) {
		r.Desired = lifecycle.DesiredRunning
		r.PreviousStatus = prev
		r.ShimPID, r.ShimStartTime, r.BootID = pend.ShimPID, pend.ShimStartTime, e.bootID
		r.CredentialHash = credHash
		r.PID, r.ProcessStartTime = 0, 0
		r.QueueSeq, r.QueuedAction, r.QueuedFrom = 0, "", ""
	})
	if err != nil {
		pend.Abort()
		return errStartFailed(id, err)
	}
	now := e.clock.Now().UTC() // before the agent can have ended
	a.mu.Unlock()
	p, err := pend.Go() // the shim's hello: up to proc.HelloTimeout
	a.mu.Lock()
	if err != nil {
		msg := errStartFailed(id, err)
		if aerr := e.applySteps(a, step{to: prev, reason: "spawn failed", revert: true, mut: func(r *store.Record) {
			r.Error = msg.Error()
			r.PreviousStatus, r.ShimPID, r.ShimStartTime = "", 0, 0
		}}); aerr != nil {
			e.log.Error().Err(aerr).Str("agent", id).Msg("cannot restore status after failed spawn")
		}
		return msg
	}
	err = e.applySteps(a, step{to: lifecycle.Running, reason: reason, data: map[string]any{"logOffset": logStart, "pid": p.PID}, mut: func(r *store.Record) {
		r.RunCount = runsBefore(r) + 1
		r.PID, r.ProcessStartTime = p.PID, p.StartTime
		r.PreviousStatus = ""
		r.QueueSeq, r.QueuedAction, r.QueuedFrom = 0, "", ""
		r.Attached = true
		r.StartedAt, r.StoppedAt, r.LastActivityAt = &now, nil, &now
		r.ExitCode, r.Signal, r.ExitReason, r.Error, r.Stale = nil, "", "", "", false
		if mut != nil {
			mut(r)
		}
	}})
	rn := newRun(p)
	if err != nil {
		// The process runs but its record could not say so: stop it rather
		// than leave an agent no record knows of. The record still leads to
		// its shim, so the next engine finds how it ended.
		if serr := p.Signal(syscall.SIGKILL); serr != nil && !errors.Is(serr, syscall.ESRCH) {
			e.log.Error().Err(serr).Str("agent", id).Int("pid", p.PID).Msg("cannot kill an agent whose start could not be recorded")
		}
		e.goTask(func() {
			if _, err := p.Wait(e.ctx); err == nil {
				p.Reap(e.ctx)
			}
		})
		return errStartFailed(id, err)
	}
	rn.logOff, rn.logSize = logStart, logStart // the scanner reads this run's lines only
	e.watchRun(a, rn)
	e.armStable(a, rn)
	return nil
}

// runsBefore is how many runs r had before this one: its count, or for a
// record from before the count was kept, what the record proves (a first
// start, its restarts and resumes, the runs that reported figures).
func runsBefore(r *store.Record) int {
	if r.RunCount > 0 || r.StartedAt == nil {
		return r.RunCount
	}
	n := 1 + r.RestartCount + r.ResumeCount
	if r.Totals != nil {
		n = max(n, r.Totals.Runs)
	}
	return n
}

// startFailed records why an agent could not be started (it keeps its
// status) and returns ProcessStartFailed. a.mu is held.
func (e *Engine) startFailed(a *agent, cause error) error {
	msg := errStartFailed(a.rec.ID, cause)
	if errors.Is(cause, ErrSandboxUnavailable) {
		msg = cause // its own kind: the machine, not the agent, is at fault
	}
	e.update(a, func(r *store.Record) { r.Error, r.AcknowledgedAt = msg.Error(), nil }) // a failure is logged
	e.appendEvent(a.rec.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "start:failed", AgentID: a.rec.ID,
		Reason: cause.Error()})
	return msg
}

// procSpec is what the shim runs for rec with args: the command resolved in
// the agent's PATH and cwd, its environment, and its files. Exit and run
// files of an earlier run are removed, so they cannot be taken for this one's.
func (e *Engine) procSpec(rec *store.Record, args []string, token string) (proc.Spec, error) {
	env := agentEnv(rec, token, e.apiAddress())
	path, err := resolveCommand(rec.Command, rec.Cwd, env)
	if err != nil {
		return proc.Spec{}, err
	}
	if err := checkDir(rec.Cwd); err != nil {
		return proc.Spec{}, fmt.Errorf("cwd %v", err)
	}
	if err := e.checkSandbox(rec); err != nil {
		return proc.Spec{}, err
	}
	// Checked: now what the start needs is made.
	if err := os.MkdirAll(filepath.Dir(rec.LogPath), 0o700); err != nil {
		return proc.Spec{}, err
	}
	sb, err := e.sandboxFile(rec)
	if err != nil {
		return proc.Spec{}, err
	}
	args = e.runArgs(rec, args) // Claude Code's hooks, a run's budget
	args = withPermissionTool(rec, args, e.apiAddress())
	logSet := e.settingsOf(rec.ProjectID)
	spec := proc.Spec{Path: path, Argv: append([]string{rec.Command}, args...), Dir: rec.Cwd, Env: env,
		Log: rec.LogPath, LogMax: logSet.logMaxBytes(), LogKeep: logSet.LogKeep, ExitFile: e.st.ExitPath(rec.ProjectID, rec.ID), RunFile: e.st.RunPath(rec.ProjectID, rec.ID),
		Grace: secs(rec.GraceSec), Sandbox: sb, Hide: e.private()}
	for _, p := range []string{spec.ExitFile, spec.RunFile} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return proc.Spec{}, err
		}
	}
	if rec.Sandbox != nil {
		spec.SandboxNetwork = rec.Sandbox.Network
		if err := e.boxSpec(rec, env, &spec); err != nil {
			return proc.Spec{}, err
		}
	}
	return spec, nil
}

// agentEnv is the engine's environment with the agent's own on top, plus
// variables that tell the agent who it is and give it its credential. A
// credential the engine itself was started with (it runs inside an agent)
// is never passed on: the agent gets its own.
func agentEnv(rec *store.Record, token, apiURL string) []string {
	m := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := m[k]; !ok {
			order = append(order, k)
		}
		m[k] = v
	}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			set(k, v)
		}
	}
	for k, v := range rec.Env {
		set(k, v)
	}
	set(EnvAgentID, rec.ID)
	set(EnvProjectID, rec.ProjectID)
	set(EnvAgentToken, token)
	set(EnvAPIURL, apiURL)
	if rec.Sandbox != nil && sandbox.BoxTmp != "" {
		// Temporary files go to the box's own scratch space (the host's
		// /tmp is read-only in the box), unless the agent says otherwise.
		if _, ok := rec.Env["TMPDIR"]; !ok {
			set("TMPDIR", sandbox.BoxTmp)
		}
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+m[k])
	}
	return out
}

// resolveCommand finds the executable the way a shell would: a name with a
// slash is a path (relative to cwd), any other name is looked up in the
// agent's PATH.
func resolveCommand(command, cwd string, env []string) (string, error) {
	if strings.Contains(command, "/") {
		p := command
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("%s: %w", command, err)
		}
		return p, nil
	}
	pathVar := ""
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			pathVar = kv[5:]
		}
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		p := filepath.Join(dir, command)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", command)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return errors.New("no such file")
		}
		return err
	}
	if fi.IsDir() {
		return errors.New("is a folder")
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return errors.New("permission denied (not executable)")
	}
	return nil
}

// watchRun adopts rn as a's live run: arms its timeout, registers it with
// the log poller and waits for its exit (layer 1). rn.logOff and logSize
// say where its reading starts. a.mu is held.
func (e *Engine) watchRun(a *agent, rn *run) {
	a.run = rn
	rn.logPath = a.rec.LogPath
	rn.lastActivity = e.lastActivityOf(a.rec)
	if t := a.rec.TimeoutSec; t > 0 && a.rec.Status == lifecycle.Running {
		left := secs(t)
		if a.rec.StartedAt != nil {
			left -= e.clock.Since(*a.rec.StartedAt)
		}
		rn.timer = e.after(a.life, max(left, 0), func() { e.onTimeout(a, rn) })
	}
	if store.Structured(a.rec.Profile) {
		rn.scanner = loganalysis.NewScanner(profileOf(a.rec))
		if rn.logOff > 0 && rn.logOff < rn.logSize && rn.p.Attached() {
			// Re-attached: reading starts inside the log, maybe mid-line.
			rn.scanner.SkipToNextLine()
		}
	}
	e.mu.Lock()
	e.live[rn] = a
	e.mu.Unlock()
	e.watchLog(a, rn)
	e.goTask(func() { e.watchExit(a, rn) })
}

// endRun forgets a's run once its end is recorded. a.mu is held.
func (e *Engine) endRun(a *agent, rn *run) {
	if a.run == rn {
		a.run = nil
	}
	rn.stopTimers()
	e.mu.Lock()
	delete(e.live, rn)
	e.mu.Unlock()
	rn.finish()
	e.runEnded(a)
}

// lastActivityOf is when a run being watched last wrote to its log: now for
// a run just started; for one adopted again (an engine restart, a
// re-attach), the later of its record's lastActivityAt and its log's last
// change — the silence clock keeps running across an engine restart rather
// than starting again. Never later than now.
func (e *Engine) lastActivityOf(r *store.Record) time.Time {
	now := e.clock.Now()
	if r.LastActivityAt == nil {
		return now
	}
	last := *r.LastActivityAt
	if fi, err := os.Stat(r.LogPath); err == nil && fi.ModTime().After(last) {
		last = fi.ModTime()
	}
	if last.After(now) {
		return now
	}
	return last
}
