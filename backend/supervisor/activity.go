package supervisor

import (
	"strings"
	"syscall"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/loganalysis"
	"shepherd/backend/logtail"
	"shepherd/backend/proc"
	"shepherd/backend/store"
)

// The log poller looks at the log of every run the engine watches, on one
// ticker of the engine's clock: a log that grew is activity (stamped with
// the engine's clock, so the stale check never mixes a file's time with the
// engine's), and for profiles that learn from the log, its new lines are read
// for the session id and the result line. One stat per running agent per
// tick; nothing per agent between ticks.
func (e *Engine) startPoller() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.polling || e.ctx.Err() != nil {
		return
	}
	e.polling = true
	e.armPoller()
}

// armPoller arms the poller's next tick. e.mu is held.
func (e *Engine) armPoller() {
	e.poller = e.after(e.ctx, e.cfg.LogPoll, func() {
		e.pollLogs()
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.ctx.Err() == nil {
			e.armPoller()
		}
	})
}

// A log that has not grown for quietAfter is looked at only every
// quietEvery-th tick: a quiet agent needs no sub-second resolution (the
// stale thresholds are minutes), and most of an idle engine's work is these
// looks.
const (
	quietAfter = 10 * time.Second
	quietEvery = 10
)

// pollLogs looks at every watched run's log once (a quiet one, once every
// quietEvery calls).
func (e *Engine) pollLogs() {
	e.mu.Lock()
	type pair struct {
		a  *agent
		rn *run
	}
	runs := make([]pair, 0, len(e.live))
	for rn, a := range e.live {
		runs = append(runs, pair{a, rn})
	}
	e.mu.Unlock()
	now := e.clock.Now()
	for _, r := range runs {
		r.rn.scanMu.Lock()
		quiet := now.Sub(r.rn.lastActivity) >= quietAfter
		r.rn.quietTicks++
		skip := quiet && r.rn.quietTicks < quietEvery
		if !skip {
			r.rn.quietTicks = 0
		}
		r.rn.scanMu.Unlock()
		if !skip {
			e.pollRun(r.a, r.rn)
		}
	}
}

// PollLogsNow runs the log poller's pass at once (for tests and tools that
// drive the engine's clock by hand).
func (e *Engine) PollLogsNow() { e.pollLogs() }

// pollRun stamps activity if the run's log changed size, and reads the
// lines the scanner has not read yet. Without a.mu.
func (e *Engine) pollRun(a *agent, rn *run) {
	size := logtail.Size(rn.logPath)
	rn.scanMu.Lock()
	grew := size != rn.logSize
	if grew {
		rn.logSize = size
		rn.lastActivity = e.clock.Now()
	}
	unread := rn.scanner != nil && rn.logOff != size
	rn.scanMu.Unlock()
	if unread {
		e.scanLog(a, rn)
	}
	if retry := rn.retrying(); grew || retry != nil {
		a.mu.Lock()
		if a.run == rn && !a.gone() {
			e.needs.FollowLog(a, &rn.wait, rn.logPath, retry, grew)
		}
		a.mu.Unlock()
	}
	if grew {
		a.mu.Lock()
		if a.run == rn && !a.gone() {
			rn.notBusy()
			if a.rec.Stale { // it came back to life
				e.update(a, func(r *store.Record) { r.Stale = false }) // a failure is logged
			}
			e.showActivity(a, rn)
		}
		a.mu.Unlock()
	}
}

// retrying is the api_retry line the run's log ends with, if it does: an
// API call being retried.
func (rn *run) retrying() *loganalysis.Retry {
	rn.scanMu.Lock()
	defer rn.scanMu.Unlock()
	return rn.retry
}

// resultNow is the result line of the run read so far (nil if none).
func (rn *run) resultNow() *loganalysis.Claude {
	rn.scanMu.Lock()
	defer rn.scanMu.Unlock()
	return rn.result
}

// lastActivityTime is the last growth seen (engine clock).
func (rn *run) lastActivityTime() time.Time {
	rn.scanMu.Lock()
	defer rn.scanMu.Unlock()
	return rn.lastActivity
}

// scanLog feeds the run's new log bytes to its scanner and acts on what it
// finds: a session id is stored at once (so resume works even if the log is
// lost later), and a result line arms the result grace (the CLI is known to
// stay alive after its result). Without a.mu; it takes it to write.
func (e *Engine) scanLog(a *agent, rn *run) {
	sid, res := rn.scan(e.clock.Now())
	if sid == "" && res == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.run != rn || a.gone() {
		return
	}
	e.sawSession(a, sid, true)
	if res != nil && a.rec.Status == lifecycle.Running {
		e.sawResult(a, rn, res)
	}
	if res != nil && rn.resultTimer == nil && a.rec.Status == lifecycle.Running {
		grace := secs(e.settingsOf(a.rec.ProjectID).ResultGraceSec)
		rn.resultTimer = e.after(a.life, grace, func() { e.onResultGrace(a, rn) })
	}
}

// sawSession keeps a session id read from a's log: at once (so resume works
// even if the log is lost later; in memory when the disk is full), and only
// one its CLI gives (loganalysis.CheckSessionID) — the log is the agent's to
// write, and the id goes into its resume's command line. Any other is
// refused, once, in the events and the log, and never kept. With event,
// the new id is an event of its own. a.mu is held.
func (e *Engine) sawSession(a *agent, sid string, event bool) {
	if sid == "" || sid == a.rec.SessionID || sid == a.refusedSession {
		return
	}
	if err := loganalysis.CheckSessionID(sid); err != nil {
		a.refusedSession = sid
		e.log.Warn().Str("project", a.rec.ProjectID).Str("agent", a.rec.ID).Err(err).Msg("session id refused")
		e.appendEvent(a.rec.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "session:refused", AgentID: a.rec.ID,
			Reason: err.Error() + "; it is not kept, and not passed to a resume"})
		return
	}
	e.updateNow(a, func(r *store.Record) { r.SessionID = sid })
	if event {
		e.appendEvent(a.rec.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "session", AgentID: a.rec.ID,
			Data: map[string]any{"sessionId": sid}})
	}
}

// scan reads the bytes appended since the last scan (at most the last
// TailBytes of them) and returns the latest session id and a new result
// line, if any.
func (rn *run) scan(now time.Time) (string, *loganalysis.Claude) {
	rn.scanMu.Lock()
	defer rn.scanMu.Unlock()
	if rn.scanner == nil {
		return "", nil
	}
	c, err := logtail.Since(rn.logPath, rn.logOff, loganalysis.TailBytes, true)
	if err != nil || len(c.Data) == 0 && !c.Reset {
		// Nothing new, but the session id read so far still counts: another
		// look (the watch's) may have read it and lost the race to record
		// it against the run's end.
		return rn.scanner.SessionID(), nil
	}
	if c.Skipped || c.Reset && c.Start > 0 {
		rn.scanner.SkipToNextLine() // more was written than we read: start at a line
	}
	rn.logOff = c.Next
	sid, res := rn.scanner.Feed(c.Data)
	if r, ok := rn.scanner.Retrying(); ok {
		rn.retry = &r
	} else {
		rn.retry = nil
	}
	// The scanner's result is the current run's: a later init clears it.
	rn.result = rn.scanner.Result()
	if t, ok := rn.scanner.InFlight(); !ok {
		rn.tool, rn.toolID = "", ""
	} else if t.ID != rn.toolID {
		rn.tool, rn.toolID, rn.toolSince = t.Name, t.ID, now
	}
	return sid, res
}

// onResultGrace: the agent wrote its result line and is still alive after
// the grace. Its group is stopped and the run counts by the result line.
func (e *Engine) onResultGrace(a *agent, rn *run) {
	a.mu.Lock()
	if a.run != rn || a.rec.Status != lifecycle.Running || rn.forced != nil || a.gone() {
		a.mu.Unlock()
		return
	}
	rn.forced = rn.endOutcome()
	grace := secs(a.rec.GraceSec)
	e.appendEvent(a.rec.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "result-grace:stop", AgentID: a.rec.ID,
		Data: map[string]any{"pid": rn.pid()}})
	e.log.Info().Str("agent", a.rec.ID).Msg("alive after its result line; stopping its group")
	a.mu.Unlock()
	rn.p.Terminate(e.ctx, []proc.Step{{Signal: syscall.SIGTERM, Wait: grace}}, nil)
}

// resultOutcome is the status a result line gives a run.
func resultOutcome(c *loganalysis.Claude) *outcome {
	if c == nil {
		return nil
	}
	if c.Failed() {
		msg := "Claude reported " + c.Subtype
		if strings.HasPrefix(c.Subtype, "turn.") {
			msg = "Codex reported " + c.Subtype
			if c.Result != "" {
				msg += ": " + c.Result
			}
		}
		return &outcome{lifecycle.Failed, lifecycle.ReasonFailed, msg}
	}
	return &outcome{lifecycle.Completed, lifecycle.ReasonCompleted, ""}
}
