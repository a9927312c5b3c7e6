package supervisor

import (
	"context"
	"os"
	"syscall"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/procid"
	"shepherd/backend/store"
)

// monitor runs a selected project's watchdog (layer 3) and stale check on
// the engine's clock. Switching projects stops it; agents keep running.
type monitor struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func secs(n int) time.Duration { return time.Duration(n) * time.Second }

// startMonitor starts p's tickers with its current settings. p.mu is not held.
func (e *Engine) startMonitor(p *project) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.monitor != nil || e.ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(e.ctx)
	m := &monitor{cancel: cancel, done: make(chan struct{})}
	p.monitor = m
	s := p.settings
	wd := e.clock.NewTicker(secs(s.WatchdogIntervalSec))
	st := e.clock.NewTicker(secs(s.StaleCheckIntervalSec))
	go func() {
		defer close(m.done)
		defer wd.Stop()
		defer st.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-wd.Chan():
				e.watchdog(p)
			case <-st.Chan():
				e.staleCheck(p)
			}
		}
	}()
	e.log.Info().Str("project", p.info.ID).Int("watchdogSec", s.WatchdogIntervalSec).
		Int("staleCheckSec", s.StaleCheckIntervalSec).Int("staleThresholdSec", s.StaleThresholdSec).Msg("monitoring started")
}

// stopMonitor stops p's tickers and waits for a tick under way to end.
func (e *Engine) stopMonitor(p *project) {
	p.mu.Lock()
	m := p.monitor
	p.monitor = nil
	p.mu.Unlock()
	if m != nil {
		m.cancel()
		<-m.done
	}
}

// restartMonitor applies changed settings to a running monitor.
func (e *Engine) restartMonitor(p *project) {
	p.mu.Lock()
	running := p.monitor != nil
	p.mu.Unlock()
	if running {
		e.stopMonitor(p)
		e.startMonitor(p)
	}
}

// watchdog is layer 3: a running agent whose process (pid + start time) is
// gone without the engine having seen its exit is orphaned; a process still
// alive for an agent whose status is terminal is killed. Only anomalies are
// logged.
func (e *Engine) watchdog(p *project) {
	for _, a := range p.list() {
		a.mu.Lock()
		r, rn := a.rec, a.run
		switch {
		case r.Status == lifecycle.Running && rn != nil:
			if procid.Compare(rn.pid, rn.startTime) != procid.Gone || a.recovering {
				a.mu.Unlock()
				continue
			}
			a.mu.Unlock()
			e.orphaned(a, rn)
			continue
		case r.Status.Terminal() && r.PID > 0 && rn == nil:
			if procid.Compare(r.PID, r.ProcessStartTime) == procid.Same {
				e.log.Warn().Str("project", r.ProjectID).Str("agent", r.ID).Int("pid", r.PID).
					Str("status", string(r.Status)).Msg("watchdog: process alive for a terminal agent; killing its group")
				_ = signalGroup(r.PID, syscall.SIGKILL)
				e.appendEvent(r.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "watchdog:kill", AgentID: r.ID,
					Data: map[string]any{"pid": r.PID, "status": r.Status}})
			}
		}
		a.mu.Unlock()
	}
}

// orphaned handles a run whose process vanished without layer 1 seeing it.
// Layer 1 gets a moment first: if it handles the exit, nothing is done twice.
func (e *Engine) orphaned(a *agent, rn *run) {
	select {
	case <-rn.exited:
		return
	case <-time.After(200 * time.Millisecond):
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.run != rn || a.rec.Status != lifecycle.Running || a.recovering {
		return
	}
	st, _ := store.ReadExit(e.st.ExitPath(a.rec.ProjectID, a.rec.ID))
	if st != nil && st.PID != rn.pid {
		st = nil
	}
	e.log.Warn().Str("project", a.rec.ProjectID).Str("agent", a.rec.ID).Int("pid", rn.pid).Msg("watchdog: agent process gone; orphaned")
	stopTimers(rn)
	a.run = nil
	now := e.clock.Now().UTC()
	if err := e.apply(a, lifecycle.Interrupted, "watchdog", func(r *store.Record) {
		r.ExitReason = lifecycle.ReasonOrphaned
		r.Error = "Process vanished without Shepherd seeing its exit (detected by watchdog)"
		setExit(r, st, now)
	}); err != nil {
		return
	}
	if st != nil {
		// The shim recorded how it ended: the status follows that.
		if o := exitOutcome(st); o.status != lifecycle.Interrupted {
			if e.apply(a, o.status, "watchdog: exit status", func(r *store.Record) { r.Error = o.msg }) == nil &&
				o.status == lifecycle.Failed {
				e.notifyFailed(a, e.settingsOf(a.rec.ProjectID))
			}
		}
	}
	e.recoverDead(a, st)
}

// staleCheck finds running agents whose log has not grown for the threshold.
func (e *Engine) staleCheck(p *project) {
	p.mu.Lock()
	threshold := secs(p.settings.StaleThresholdSec)
	p.mu.Unlock()
	now := e.clock.Now()
	for _, a := range p.list() {
		a.mu.Lock()
		r, rn := a.rec, a.run
		if r.Status != lifecycle.Running || rn == nil || a.recovering || !staleChecked(r) {
			a.mu.Unlock()
			continue
		}
		last := lastActivity(r)
		a.mu.Unlock()
		if now.Sub(last) >= threshold {
			e.recoverStale(a, rn, now.Sub(last))
		}
	}
}

// staleChecked: on by default for claude-stream-json agents, off for
// generic ones (a quiet dev server is not a hung one); staleCheck overrides.
func staleChecked(r *store.Record) bool {
	if r.StaleCheck != nil {
		return *r.StaleCheck
	}
	return r.Profile == store.ProfileClaudeJSON
}

// lastActivity is the last growth of the log, or the start of the run.
func lastActivity(r *store.Record) time.Time {
	var t time.Time
	if r.StartedAt != nil {
		t = *r.StartedAt
	}
	if fi, err := os.Stat(r.LogPath); err == nil && fi.ModTime().After(t) {
		t = fi.ModTime()
	}
	return t
}

// WatchdogNow runs one watchdog pass over a project at once (the ticker's
// work, for `bench/` and diagnostics).
func (e *Engine) WatchdogNow(projectID string) error {
	p, err := e.project(projectID)
	if err != nil {
		return err
	}
	e.watchdog(p)
	return nil
}

// StaleCheckNow runs one stale check over a project at once.
func (e *Engine) StaleCheckNow(projectID string) error {
	p, err := e.project(projectID)
	if err != nil {
		return err
	}
	e.staleCheck(p)
	return nil
}
