package supervisor

import (
	"fmt"
	"syscall"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/loganalysis"
	"shepherd/backend/notify"
	"shepherd/backend/proc"
	"shepherd/backend/recovery"
	"shepherd/backend/shim"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/figures"
)

func profileOf(r *store.Record) loganalysis.Profile {
	return loganalysis.Profile{Name: r.Profile, CompletionPattern: r.CompletionPattern, ErrorPattern: r.ErrorPattern}
}

// analyze reads the tail of the agent's log and keeps the latest session id
// it finds. a.mu is held.
func (e *Engine) analyze(a *agent) loganalysis.Result {
	res, err := loganalysis.Analyze(a.rec.LogPath, profileOf(a.rec))
	if err != nil {
		e.log.Warn().Err(err).Str("agent", a.rec.ID).Msg("log analysis failed; taking the log as interrupted")
		res = loganalysis.Result{Verdict: loganalysis.Interrupted}
	}
	e.sawSession(a, res.SessionID, false)
	return res
}

func (e *Engine) settingsOf(projectID string) Settings {
	e.mu.Lock()
	p := e.projects[projectID]
	e.mu.Unlock()
	if p == nil {
		return DefaultSettings()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.settings
}

func (e *Engine) recoveryEvent(a *agent, found string, res loganalysis.Result, act recovery.Action) {
	e.recoveryEventData(a, found, res, act, nil)
}

// recoveryEventData is recoveryEvent with more data (a stale agent's
// silence).
func (e *Engine) recoveryEventData(a *agent, found string, res loganalysis.Result, act recovery.Action, more map[string]any) {
	data := map[string]any{"found": found, "verdict": res.Verdict, "action": act, "autoResumeCount": a.rec.AutoResumeCount}
	for k, v := range more {
		data[k] = v
	}
	if res.Line != "" {
		data["line"] = res.Line
	}
	e.appendEvent(a.rec.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "recovery", AgentID: a.rec.ID, Data: data})
	e.log.Info().Str("project", a.rec.ProjectID).Str("agent", a.rec.ID).Str("found", found).
		Str("verdict", string(res.Verdict)).Str("action", string(act)).Msg("recovery")
}

// recoverDead runs log analysis and recovery for an agent found dead
// without the engine seeing its exit (at project load, by the watchdog).
// st is the exit status the shim recorded, if any. a.mu is held.
func (e *Engine) recoverDead(a *agent, st *shim.ExitStatus) recovery.Action {
	if a.rec.Status.Live() || a.rec.Status == lifecycle.Stopped || a.gone() ||
		a.rec.Status == lifecycle.Paused && a.rec.BudgetPause != "" { // paused by the budget its run reached while away
		return "" // a stop that completed while the engine was away is not a death
	}
	res := e.analyze(a)
	if res.Claude != nil {
		// A run that ended while nobody watched: its figures, once.
		var fig store.RunFigures
		counted := false
		at := e.clock.Now()
		if a.rec.StoppedAt != nil {
			at = *a.rec.StoppedAt
		}
		// Counted where it is recorded: kept in memory when the disk is full,
		// so the same run is not counted again.
		if err := e.updateNow(a, func(r *store.Record) { fig, counted = figures.Count(r, res.Claude, at) }); err == nil && counted {
			e.runCounted(a, fig)
		}
	}
	s := e.settingsOf(a.rec.ProjectID)
	act := recovery.Decide(recovery.Input{Found: recovery.FoundDead, ExitKnown: st != nil, Verdict: res.Verdict,
		Resumable: resumable(a.rec), AutoResumeCount: a.rec.AutoResumeCount, Limit: s.AutoResumeLimit,
		UserStopped: a.rec.Desired == lifecycle.DesiredStopped})
	e.recoveryEvent(a, "dead", res, act)
	switch act {
	case recovery.MarkCompleted:
		e.apply(a, lifecycle.Completed, "log analysis: completed", nil) // a failure is logged
	case recovery.MarkFailed:
		if e.apply(a, lifecycle.Failed, "log analysis: error", func(r *store.Record) {
			r.Error = "The log ends in an error: " + res.Line
		}) == nil {
			e.notifyFailed(a, s)
		}
	case recovery.Resume:
		e.autoResume(a, s, false)
	case recovery.ResumeLimit:
		e.resumeLimit(a, s)
	case recovery.StayInterrupted:
		e.notify(notify.Notification{Level: notify.Warning, Kind: notify.KindInterrupted, Title: "Agent interrupted",
			ProjectID: a.rec.ProjectID, AgentID: a.rec.ID, Native: s.NotifyNative,
			Message: fmt.Sprintf("Agent %s stopped without finishing and cannot be resumed: %s", a.rec.ID, a.rec.Error)})
	}
	return act
}

func (e *Engine) notifyFailed(a *agent, s Settings) {
	e.notify(notify.Notification{Level: notify.Error, Kind: notify.KindFailed, Title: "Agent failed",
		ProjectID: a.rec.ProjectID, AgentID: a.rec.ID, Native: s.NotifyNative,
		Message:   "Agent finished with an error: " + a.rec.ID,
		MessageJA: "Agent終了処理でエラーが発生しました: " + a.rec.ID})
}

// autoResume resumes a dead agent (autoResumeCount+1), in a slot the
// caller holds (held) or through the queue. a.mu is held.
func (e *Engine) autoResume(a *agent, s Settings, held bool) {
	var err error
	if held {
		args, mut := actionArgs(a.rec, actAutoResume)
		err = e.startLocked(a, args, actAutoResume, mut)
	} else {
		err = e.launch(a, actAutoResume)
	}
	if err != nil {
		e.log.Warn().Err(err).Str("agent", a.rec.ID).Msg("auto-resume failed")
		e.notify(notify.Notification{Level: notify.Error, Kind: notify.KindFailed, Title: "Auto-resume failed",
			ProjectID: a.rec.ProjectID, AgentID: a.rec.ID, Native: s.NotifyNative, Message: err.Error()})
		return
	}
	e.notify(notify.Notification{Level: notify.Info, Kind: notify.KindResumed, Title: "Agent resumed",
		ProjectID: a.rec.ProjectID, AgentID: a.rec.ID,
		Message: fmt.Sprintf("Agent %s was resumed (auto-resume %d of %d)", a.rec.ID, a.rec.AutoResumeCount, s.AutoResumeLimit)})
}

// resumeLimit gives up on an agent: failed/resume_limit. a.mu is held; the
// agent has no live process.
func (e *Engine) resumeLimit(a *agent, s Settings) {
	mut := func(r *store.Record) {
		r.ExitReason = lifecycle.ReasonResumeLimit
		r.Error = fmt.Sprintf("Auto-resume limit reached (%d)", s.AutoResumeLimit)
	}
	var err error
	if a.rec.Status == lifecycle.Failed {
		err = e.update(a, mut)
	} else {
		err = e.apply(a, lifecycle.Failed, "resume limit", mut)
	}
	if err != nil {
		return
	}
	e.notify(notify.Notification{Level: notify.Error, Kind: notify.KindResumeLimit, Title: "Auto-resume limit reached",
		ProjectID: a.rec.ProjectID, AgentID: a.rec.ID, Native: s.NotifyNative,
		Message:   "Auto-recovery gave up after the resume limit: " + a.rec.ID,
		MessageJA: "自動回復の試行回数上限に達しました: " + a.rec.ID})
}

// recoverStale runs log analysis and recovery for a running agent that has
// been silent past the threshold. It runs as a recovery task (a.recovering
// is set), without a.mu. With sampleCPU, the agent's CPU use is measured
// first: one that works is busy, not stale.
func (e *Engine) recoverStale(a *agent, rn *run, silent time.Duration, sampleCPU bool) {
	if sampleCPU && usesCPUNow(rn.pid()) {
		a.mu.Lock()
		if a.run == rn && !rn.busy.busy {
			rn.busy.busy, rn.busy.tool, rn.busy.since = true, "cpu", e.clock.Now()
			e.showActivity(a, rn)
		}
		a.mu.Unlock()
		return
	}
	a.mu.Lock()
	if a.run != rn || a.rec.Status != lifecycle.Running || a.gone() {
		a.mu.Unlock()
		return
	}
	res := e.analyze(a)
	s := e.settingsOf(a.rec.ProjectID)
	policy := store.OnStaleOf(a.rec)
	act := recovery.Decide(recovery.Input{Found: recovery.FoundStale, Verdict: res.Verdict,
		Resumable: resumable(a.rec), AutoResumeCount: a.rec.AutoResumeCount, Limit: s.AutoResumeLimit,
		UserStopped: a.rec.Desired == lifecycle.DesiredStopped})
	switch policy {
	case store.OnStaleFlag:
		act = recovery.NotifyStaleAlive
	case store.OnStaleRestart:
		if a.rec.Desired != lifecycle.DesiredStopped {
			act = recovery.Restart
		}
	}
	if act == recovery.NotifyStaleAlive && a.rec.Stale {
		// Already flagged and still silent: the same finding, not a new
		// one. Nothing is appended or notified until it changes (the agent
		// writes again, or ends), so the feed holds one entry per finding
		// and an acknowledged agent stays quiet.
		a.mu.Unlock()
		return
	}
	e.recoveryEventData(a, "stale", res, act, map[string]any{"silentSec": int(silent.Round(time.Second).Seconds())})
	grace := secs(a.rec.GraceSec)
	id := a.rec.ID
	term := []proc.Step{{Signal: syscall.SIGTERM, Wait: grace}}
	switch act {
	case recovery.MarkCompleted:
		rn.forced = &outcome{lifecycle.Completed, lifecycle.ReasonStale, ""}
		a.mu.Unlock()
		rn.p.Terminate(e.ctx, term, nil)
		return
	case recovery.MarkFailed:
		rn.forced = &outcome{lifecycle.Failed, lifecycle.ReasonStale, "The log ends in an error: " + res.Line}
		a.mu.Unlock()
		if _, gone := rn.p.Terminate(e.ctx, term, nil); gone && e.waitHandled(rn) {
			a.mu.Lock()
			if !a.gone() {
				e.notifyFailed(a, s)
			}
			a.mu.Unlock()
		}
		return
	case recovery.Restart:
		// onStale=restart: kill the silent process and start it again with
		// its own arguments, as keep-alive would.
		rn.forced = &outcome{lifecycle.Interrupted, lifecycle.ReasonStale,
			fmt.Sprintf("Silent for %s; killed to be restarted", silenceText(silent))}
		a.mu.Unlock()
		if !rn.p.Kill(e.ctx, nil) || !e.waitHandled(rn) {
			return
		}
		a.mu.Lock()
		if a.rec.Status == lifecycle.Interrupted && a.rec.ExitReason == lifecycle.ReasonStale && !a.gone() {
			if err := e.launch(a, actKeepAlive); err != nil {
				e.notify(notify.Notification{Level: notify.Error, Kind: notify.KindFailed, Title: "Restart failed",
					ProjectID: a.rec.ProjectID, AgentID: id, Native: s.NotifyNative, Message: err.Error()})
			} else {
				e.notify(notify.Notification{Level: notify.Warning, Kind: notify.KindStale, Title: "Silent agent restarted",
					ProjectID: a.rec.ProjectID, AgentID: id, Native: s.NotifyNative,
					Message: fmt.Sprintf("Agent %s was silent for %s with no CPU use; it was restarted (onStale: restart)", id, silenceText(silent))})
			}
		}
		a.mu.Unlock()
		return
	case recovery.Resume, recovery.ResumeLimit:
		// Kill the hung process, wait for its end to be recorded
		// (interrupted/stale), then resume or give up.
		rn.forced = &outcome{lifecycle.Interrupted, lifecycle.ReasonStale,
			fmt.Sprintf("Silent for %s; killed", silenceText(silent))}
		// The resumed run takes the slot of the one it replaces: hold it, so
		// the queue does not get it in between.
		defer e.queues.Reserve(&a.p.q)()
		a.mu.Unlock()
		if !rn.p.Kill(e.ctx, nil) || !e.waitHandled(rn) {
			if e.ctx.Err() == nil {
				e.log.Error().Str("agent", id).Msg("stale agent survived SIGKILL; not resumed")
			}
			return
		}
		if h := e.testHooks.afterStaleKill; h != nil {
			h(id)
		}
		a.mu.Lock()
		// The kill was recorded (the forced outcome), not a user stop; and
		// the agent is still there (a remove ends its lifetime).
		if a.rec.Status == lifecycle.Interrupted && a.rec.ExitReason == lifecycle.ReasonStale && !a.gone() {
			if act == recovery.Resume {
				e.autoResume(a, s, true)
			} else {
				e.resumeLimit(a, s)
			}
		}
		a.mu.Unlock()
		return
	case recovery.NotifyStaleAlive:
		e.updateNow(a, func(r *store.Record) { r.Stale, r.AcknowledgedAt = true, nil })
		e.notify(notify.Notification{Level: notify.Warning, Kind: notify.KindStale, Title: "Agent silent",
			ProjectID: a.rec.ProjectID, AgentID: id, Native: s.NotifyNative,
			Message: staleMessage(id, silent, policy)})
	}
	a.mu.Unlock()
}

// waitHandled waits for the end of a run whose process is gone to be
// recorded (layer 1 does it within moments of the exit), at most
// KillConfirm.
func (e *Engine) waitHandled(rn *run) bool {
	t := e.clock.NewTimer(e.cfg.KillConfirm)
	defer t.Stop()
	select {
	case <-rn.handled:
		return true
	case <-t.Chan():
		return false
	case <-e.ctx.Done():
		return false
	}
}

// staleMessage says what happened to a stale agent left running.
func staleMessage(id string, silent time.Duration, policy string) string {
	if policy == store.OnStaleFlag {
		return fmt.Sprintf("Agent %s has been silent for %s with no CPU use; it is left running (onStale: flag)", id, silenceText(silent))
	}
	return fmt.Sprintf("Agent %s has been silent for %s; it cannot be resumed, so it is left running", id, silenceText(silent))
}

// silenceText is a silence in the unit of the limits it is measured
// against: "30 s" under a minute (a 30 s threshold is not "0 min"), "6 min",
// "2 h 5 min".
func silenceText(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	case d%time.Hour < time.Minute:
		return fmt.Sprintf("%d h", int(d.Hours()))
	}
	return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
}
