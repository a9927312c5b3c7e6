package supervisor

import (
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
)

const (
	backoffBase   = 2 * time.Second
	backoffMax    = 60 * time.Second
	stableRunTime = 60 * time.Second
)

// backoff is the keep-alive delay after n failures in a row: 2 s, doubling,
// at most 60 s.
func backoff(n int) time.Duration {
	d := backoffBase
	for i := 0; i < n && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}

// wantsRestart: a keep-alive agent whose user wants it running and that has
// no process.
func wantsRestart(r *store.Record) bool {
	return r.KeepAlive && r.Desired == lifecycle.DesiredRunning && !r.Status.Live()
}

// scheduleRestart arms the keep-alive restart of a dead agent. The failure
// count and the restart time are persisted, so a crash loop keeps its
// backoff across engine restarts. a.mu is held.
func (e *Engine) scheduleRestart(a *agent) bool {
	if !wantsRestart(a.rec) || a.restartTimer != nil || a.gone() {
		return false
	}
	now := e.clock.Now().UTC()
	// A restart time already set is a pending restart (from before an
	// engine restart): keep it, or restart at once if it has passed.
	at := a.rec.NextRestartAt
	if at == nil {
		n := a.rec.RestartFailureCount
		if ranStable(a.rec) {
			n = 0
		}
		next := now.Add(backoff(n))
		// The backoff holds in memory when the disk is full (and is written
		// when it can be): a crash loop never restarts faster for it.
		if err := e.updateNow(a, func(r *store.Record) {
			r.RestartFailureCount = n + 1
			r.NextRestartAt = &next
		}); err != nil {
			return false
		}
		at = &next
	}
	delay := max(at.Sub(now), 0)
	a.restartGen++
	gen := a.restartGen
	a.restartTimer = e.after(a.life, delay, func() { e.keepAliveRestart(a, gen) })
	data := map[string]any{"at": at, "failures": a.rec.RestartFailureCount}
	if a.rec.AckLoop != "" && a.rec.AcknowledgedAt != nil {
		data["acknowledged"] = true
	}
	e.appendEvent(a.rec.ProjectID, store.Event{Time: now, Event: "keep-alive:scheduled", AgentID: a.rec.ID, Data: data})
	return true
}

// ranStable: the last run stayed up long enough to reset the backoff.
func ranStable(r *store.Record) bool {
	return r.StartedAt != nil && r.StoppedAt != nil && r.StoppedAt.Sub(*r.StartedAt) >= stableRunTime
}

func (e *Engine) keepAliveRestart(a *agent, gen int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !e.awaitStart(e.ctx, a) { // another start (the user's) is under way: its end decides
		return
	}
	if gen != a.restartGen {
		return // cancelled (or re-armed) after this timer fired
	}
	a.restartTimer = nil
	if !wantsRestart(a.rec) || a.gone() {
		return
	}
	err := e.launch(a, actKeepAlive)
	if err != nil {
		e.log.Warn().Err(err).Str("agent", a.rec.ID).Msg("keep-alive restart failed")
		// In memory whatever the disk says: a restart time left set would be
		// taken for a pending one and tried again at once.
		e.updateNow(a, func(r *store.Record) { r.NextRestartAt = nil })
		e.scheduleRestart(a)
	}
}

// cancelRestart drops a pending keep-alive restart. a.mu is held.
func (e *Engine) cancelRestart(a *agent) {
	if a.restartTimer != nil {
		a.restartTimer.Stop()
		a.restartTimer = nil
		a.restartGen++
	}
}

// armStable resets the backoff once a run has stayed up for a minute.
// a.mu is held.
func (e *Engine) armStable(a *agent, rn *run) {
	if !a.rec.KeepAlive || a.rec.RestartFailureCount == 0 {
		return
	}
	rn.stable = e.after(a.life, stableRunTime, func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.run == rn && a.rec.Status == lifecycle.Running && a.rec.RestartFailureCount != 0 {
			e.updateNow(a, func(r *store.Record) {
				r.RestartFailureCount = 0
				if r.AckLoop != "" { // the loop the user acknowledged is over
					r.AcknowledgedAt, r.AckLoop = nil, ""
				}
			})
		}
	})
}
