package supervisor

import (
	"io"
	"os"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/loganalysis"
	"shepherd/backend/store"
)

// followLog reads what a running claude-stream-json agent appends to its
// log: the session id of each run is stored in the record as soon as it is
// written (so resume works even if the log is lost later), and a result line
// arms the result grace (the CLI is known to stay alive after its result).
func (e *Engine) followLog(a *agent, rn *run) {
	defer e.watchers.Done()
	t := time.NewTicker(e.cfg.LogPoll)
	defer t.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-rn.exited:
			return
		case <-t.C:
			e.scanLog(a, rn)
		}
	}
}

// scanLog feeds the run's new log bytes to its scanner and acts on what it
// finds. Without a.mu; it takes it to write.
func (e *Engine) scanLog(a *agent, rn *run) {
	a.mu.Lock()
	path := a.rec.LogPath
	a.mu.Unlock()
	sid, res := rn.scan(path)
	if sid == "" && res == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.run != rn {
		return
	}
	if sid != "" && sid != a.rec.SessionID {
		_ = e.update(a, func(r *store.Record) { r.SessionID = sid })
		e.appendEvent(a.rec.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "session", AgentID: a.rec.ID,
			Data: map[string]any{"sessionId": sid}})
	}
	if res != nil && rn.resultTimer == nil && a.rec.Status == lifecycle.Running {
		grace := secs(e.settingsOf(a.rec.ProjectID).ResultGraceSec)
		rn.resultTimer = e.clock.AfterFunc(grace, func() { e.onResultGrace(a, rn) })
	}
}

// scan reads the bytes appended since the last scan (at most the last
// TailBytes of them) and returns a new session id and result line, if any.
func (rn *run) scan(path string) (string, *loganalysis.Claude) {
	rn.scanMu.Lock()
	defer rn.scanMu.Unlock()
	if rn.scanner == nil {
		return "", nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() <= rn.logOff {
		return "", nil
	}
	from := rn.logOff
	if fi.Size()-from > loganalysis.TailBytes {
		from = fi.Size() - loganalysis.TailBytes
	}
	buf := make([]byte, fi.Size()-from)
	n, err := f.ReadAt(buf, from)
	if err != nil && err != io.EOF {
		return "", nil
	}
	if from > rn.logOff {
		rn.scanner.SkipToNextLine() // more was written than we read: start at a line
	}
	rn.logOff = from + int64(n)
	sid, res := rn.scanner.Feed(buf[:n])
	// The scanner's result is the current run's: a later init clears it.
	rn.result = rn.scanner.Result()
	return sid, res
}

// onResultGrace: the agent wrote its result line and is still alive after
// the grace. Its group is stopped and the run counts by the result line.
func (e *Engine) onResultGrace(a *agent, rn *run) {
	a.mu.Lock()
	if a.run != rn || a.rec.Status != lifecycle.Running || rn.forced != nil {
		a.mu.Unlock()
		return
	}
	rn.forced = resultOutcome(rn.result)
	grace := secs(a.rec.GraceSec)
	e.appendEvent(a.rec.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "result-grace:stop", AgentID: a.rec.ID,
		Data: map[string]any{"pid": rn.pid}})
	e.log.Info().Str("agent", a.rec.ID).Msg("alive after its result line; stopping its group")
	a.mu.Unlock()
	e.terminate(rn, time.Now().Add(grace))
}

// resultOutcome is the status a result line gives a run.
func resultOutcome(c *loganalysis.Claude) *outcome {
	if c == nil {
		return nil
	}
	if c.Failed() {
		return &outcome{lifecycle.Failed, lifecycle.ReasonFailed, "Claude reported " + c.Subtype}
	}
	return &outcome{lifecycle.Completed, lifecycle.ReasonCompleted, ""}
}
