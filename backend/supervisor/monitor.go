package supervisor

import (
	"errors"
	"sync"
	"syscall"
	"time"

	"github.com/jonboulle/clockwork"

	"shepherd/backend/filewatch"
	"shepherd/backend/lifecycle"
	"shepherd/backend/procid"
	"shepherd/backend/store"
)

// monitor is a loaded project's watchdog (layer 3) and stale check: when
// each is next due. One engine-wide timer (monitors) is armed for the
// earliest of every project's deadlines, so an idle engine wakes once for
// all the passes due together, not once per project and kind. Each
// project's passes due at a wakeup run as a task of their own, one after
// the other; one that waits — on an agent an operation holds — is left to
// end on its own after passPatience, so it delays no other project's
// passes (monitorTick). A pass only looks:
// what it finds is handed to recovery tasks, so a slow recovery never
// delays a check.
type monitor struct {
	p       *project
	stopped bool      // under monitors.mu
	running bool      // a pass of the project is under way (under monitors.mu): the next one due waits for its end
	watchAt time.Time // the next watchdog pass (engine clock), under monitors.mu
	staleAt time.Time // the next stale check, under monitors.mu
	// The intervals the deadlines were set with, under monitors.mu.
	watchEvery, staleEvery time.Duration
	// pauseWatch, with WatchFiles: the pause signal file's changes.
	pauseWatch *filewatch.Watch
}

// monitors is the engine's one timer for every project's passes.
type monitors struct {
	mu    sync.Mutex
	all   map[*monitor]struct{}
	timer clockwork.Timer // armed for due; nil: none
	due   time.Time
	armed int // counts the timers armed: a tick that is not the last one armed leaves timer alone
}

// passPatience is how long (real time) a wakeup waits for one project's
// passes before it goes on with the next project's: far more than a pass
// over a project's agents takes (a few milliseconds for a hundred).
const passPatience = 250 * time.Millisecond

func secs(n int) time.Duration { return time.Duration(n) * time.Second }

// early is how much sooner than its interval a project's first pass (after
// its load or a change of its settings) may be due, to share a wakeup with a
// pass already due then: a sixteenth of the interval, at most 2 s. Every
// later pass is due exactly its interval after the wakeup that ran the last
// one, so passes run together stay together: projects loaded within a
// couple of seconds of each other (at the engine's start) wake it once.
func early(interval time.Duration) time.Duration { return min(interval/16, 2*time.Second) }

// firstDue is when a pass with interval every, scheduled now, is first due:
// the latest deadline already set that is at most early(every) sooner than
// now+every, else now+every. e.mon.mu is held.
func (e *Engine) firstDue(now time.Time, every time.Duration) time.Time {
	due := now.Add(every)
	best := time.Time{}
	for m := range e.mon.all {
		for _, t := range []time.Time{m.watchAt, m.staleAt} {
			if !t.After(due) && !t.Before(due.Add(-early(every))) && t.After(best) {
				best = t
			}
		}
	}
	if best.IsZero() {
		return due
	}
	return best
}

// startMonitor schedules p's passes with its current settings. p.mu is not
// held. Locks: p.mu, then e.mon.mu, which is a leaf (nothing is taken under
// it but the engine's timer bookkeeping).
func (e *Engine) startMonitor(p *project) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.monitor != nil || e.ctx.Err() != nil {
		return
	}
	m := &monitor{p: p}
	p.monitor = m
	s := p.settings
	now := e.clock.Now()
	e.mon.mu.Lock()
	if e.mon.all == nil {
		e.mon.all = map[*monitor]struct{}{}
	}
	m.watchEvery, m.staleEvery = secs(s.WatchdogIntervalSec), secs(s.StaleCheckIntervalSec)
	m.watchAt, m.staleAt = e.firstDue(now, m.watchEvery), e.firstDue(now, m.staleEvery)
	e.mon.all[m] = struct{}{}
	e.armMonitors()
	e.mon.mu.Unlock()
	e.watchPauseSignal(p, m)
	e.log.Debug().Str("project", p.info.ID).Int("watchdogSec", s.WatchdogIntervalSec).
		Int("staleCheckSec", s.StaleCheckIntervalSec).Int("staleThresholdSec", s.StaleThresholdSec).Msg("monitoring started")
}

// armMonitors arms the engine's timer for the earliest deadline of every
// monitor, unless it is armed for that already. e.mon.mu is held.
func (e *Engine) armMonitors() {
	var next time.Time
	for m := range e.mon.all {
		for _, t := range []time.Time{m.watchAt, m.staleAt} {
			if next.IsZero() || t.Before(next) {
				next = t
			}
		}
	}
	if e.mon.timer != nil {
		if !next.IsZero() && e.mon.due.Equal(next) {
			return
		}
		e.mon.timer.Stop()
		e.mon.timer = nil
	}
	if next.IsZero() || e.ctx.Err() != nil {
		return
	}
	e.mon.due = next
	e.mon.armed++
	n := e.mon.armed
	e.mon.timer = e.after(e.ctx, max(next.Sub(e.clock.Now()), 0), func() { e.monitorTick(n) })
}

// monitorTick runs every project's passes due by now, one project after
// the other, each as a task of its own: a project's pass that has not ended
// after passPatience (it waits on an agent an operation holds) is left to
// end on its own and the next project's passes go on — a waiting project
// delays no other, and otherwise one pass runs at a time, on one thread. A
// project whose last pass is still under way gets its next one when that
// ends (due again at once), not a second one beside it. Then the timer is
// armed for the next deadline, the data folder's space looked at and
// AfterPasses called.
func (e *Engine) monitorTick(n int) {
	type pass struct {
		m               *monitor
		watchdog, stale bool
	}
	now := e.clock.Now()
	var due []pass
	e.mon.mu.Lock()
	if n == e.mon.armed {
		e.mon.timer = nil
	}
	for m := range e.mon.all {
		d := pass{m: m, watchdog: !m.watchAt.After(now), stale: !m.staleAt.After(now)}
		if !d.watchdog && !d.stale || m.running {
			continue
		}
		m.running = true
		// Next due the project's interval after this wakeup.
		if d.watchdog {
			m.watchAt = now.Add(m.watchEvery)
		}
		if d.stale {
			m.staleAt = now.Add(m.staleEvery)
		}
		due = append(due, d)
	}
	e.armMonitors()
	e.mon.mu.Unlock()
	if len(due) == 0 {
		return
	}
	for _, d := range due {
		done := make(chan struct{})
		ok := e.transient(func() {
			defer close(done)
			defer func() {
				e.mon.mu.Lock()
				d.m.running = false
				e.mon.mu.Unlock()
			}()
			e.mon.mu.Lock()
			stopped := d.m.stopped
			e.mon.mu.Unlock()
			if stopped {
				return
			}
			if d.watchdog {
				e.watchdog(d.m.p)
			}
			if d.stale {
				e.staleCheck(d.m.p)
			}
		})
		if !ok {
			return // closing
		}
		t := time.NewTimer(passPatience)
		select {
		case <-done:
		case <-t.C: // it waits: left to end on its own
		case <-e.ctx.Done():
		}
		t.Stop()
	}
	if e.ctx.Err() != nil {
		return
	}
	e.checkDisk() // one statfs on a wakeup the engine has anyway
	if e.cfg.AfterPasses != nil {
		e.cfg.AfterPasses()
	}
}

// stopMonitor stops p's passes. It does not wait: a pass under way ends by
// itself.
func (e *Engine) stopMonitor(p *project) {
	p.mu.Lock()
	m := p.monitor
	p.monitor = nil
	p.mu.Unlock()
	if m == nil {
		return
	}
	e.mon.mu.Lock()
	m.stopped = true
	delete(e.mon.all, m)
	e.armMonitors()
	e.mon.mu.Unlock()
	if m.pauseWatch != nil {
		m.pauseWatch.Stop()
	}
}

// restartMonitor applies changed intervals to a running monitor.
func (e *Engine) restartMonitor(p *project) {
	p.mu.Lock()
	running := p.monitor != nil
	p.mu.Unlock()
	if running {
		e.stopMonitor(p)
		e.startMonitor(p)
	}
}

// recover runs f as a recovery of a: one at a time per agent (a.recovering),
// a few at a time for the engine (recoverySlots), off the monitor's timers.
// a.mu is held.
func (e *Engine) recover(a *agent, f func()) {
	a.recovering = true
	ok := e.transient(func() {
		defer func() {
			a.mu.Lock()
			a.recovering = false
			a.mu.Unlock()
		}()
		select {
		case e.recoverySlots <- struct{}{}:
		case <-e.ctx.Done():
			return
		}
		defer func() { <-e.recoverySlots }()
		f()
	})
	if !ok {
		a.recovering = false
	}
}

// watchdog is layer 3: a running agent whose process (pid + start time) is
// gone without the engine having seen its exit is orphaned; a process still
// alive for an agent whose status is terminal is killed. Only anomalies are
// logged.
func (e *Engine) watchdog(p *project) {
	s := e.settingsOf(p.info.ID)
	for _, a := range p.list() {
		a.mu.Lock()
		e.expirePaused(a, s)
		r, rn := a.rec, a.run
		switch {
		case a.gone() || a.recovering:
		case r.Status == lifecycle.Running && rn != nil:
			// A process seen gone on two passes in a row, its end still not
			// recorded, was missed by layer 1 (which records an end within
			// milliseconds): the first sighting gives layer 1 the interval.
			if rn.check == nil {
				rn.check = procid.Track(rn.pid(), rn.p.StartTime)
			}
			switch gone := rn.check.Compare() == procid.Gone; {
			case !gone:
				rn.suspect = false
			case !rn.suspect:
				rn.suspect = true
			default:
				e.recover(a, func() { e.orphaned(a, rn) })
			}
		case r.Status.Terminal() && r.PID > 0 && rn == nil:
			if procid.Compare(r.PID, r.ProcessStartTime) == procid.Same {
				e.log.Warn().Str("project", r.ProjectID).Str("agent", r.ID).Int("pid", r.PID).
					Str("status", string(r.Status)).Msg("watchdog: process alive for a terminal agent; killing its group")
				if err := procid.SignalGroup(r.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
					e.log.Error().Err(err).Str("agent", r.ID).Int("pid", r.PID).Msg("watchdog: cannot kill the group")
				}
				e.appendEvent(r.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "watchdog:kill", AgentID: r.ID,
					Data: map[string]any{"pid": r.PID, "status": r.Status}})
			}
		}
		a.mu.Unlock()
	}
}

// orphaned handles a run whose process vanished without layer 1 seeing it.
// The shim may have recorded how it ended: the status follows that.
func (e *Engine) orphaned(a *agent, rn *run) {
	st := e.runner.AwaitExit(e.ctx, rn.p.Identity)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.run != rn || a.rec.Status != lifecycle.Running || a.gone() {
		return
	}
	e.log.Warn().Str("project", a.rec.ProjectID).Str("agent", a.rec.ID).Int("pid", rn.pid()).Msg("watchdog: agent process gone; orphaned")
	now := e.clock.Now().UTC()
	if err := e.applyNow(a, step{to: lifecycle.Interrupted, reason: "watchdog", mut: func(r *store.Record) {
		r.ExitReason = lifecycle.ReasonOrphaned
		r.Error = "Process vanished without Shepherd seeing its exit (detected by watchdog)"
		r.LastActivityAt = rn.activityAt()
		setExit(r, st, now)
	}}); err != nil {
		return
	}
	e.endRun(a, rn)
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

// staleCheck looks at every running agent: a silent one is looked at for
// signs of work (busy.go), and one silent past the threshold with no sign of
// work — or busy past busyThresholdSec — is handed to recovery. What it
// costs is a comparison for an agent whose activity is as it was, and a
// read of /proc for a silent one.
func (e *Engine) staleCheck(p *project) {
	s := e.settingsOf(p.info.ID)
	threshold, busyLimit := secs(s.StaleThresholdSec), secs(s.BusyThresholdSec)
	for _, a := range p.list() {
		a.mu.Lock()
		rn := a.run
		if a.rec.Status != lifecycle.Running || rn == nil || a.recovering || a.gone() {
			a.mu.Unlock()
			continue
		}
		watched := rn.logWatch != nil
		a.mu.Unlock()
		// A watched log's growth is seen as it happens: the log is looked at
		// here only before the agent is judged stale (so a change the
		// notification missed cannot make it stale). A polled one is looked
		// at every pass.
		if !watched || e.clock.Since(rn.lastActivityTime()) >= threshold {
			e.pollRun(a, rn) // judge by the log as it is now
		}
		a.mu.Lock()
		if a.run != rn || a.recovering {
			a.mu.Unlock()
			continue
		}
		silent := e.clock.Since(rn.lastActivityTime())
		if silent >= workingWindow(s) {
			e.lookBusy(rn)
		} else {
			rn.notBusy()
		}
		// A waiting agent said why it is silent (a permission, input, a
		// rate limit): never stale.
		if staleChecked(a.rec) && silent >= threshold && rn.wait.What() == nil {
			busyOK := rn.busy.busy && (busyLimit == 0 || silent < busyLimit)
			if !busyOK {
				// No CPU rate measured yet (the engine just started): measure
				// one before calling it stale.
				sample := !rn.busy.busy && !rn.busy.cpuKnown
				e.recover(a, func() { e.recoverStale(a, rn, silent, sample) })
			}
		}
		e.showActivityWith(a, rn, s)
		a.mu.Unlock()
	}
}

// staleChecked: on for every agent (SPEC "Attention": silence for any
// command); staleCheck=false turns it off. What a stale agent gets is its
// onStale (store.OnStaleOf): any command is only flagged unless it says
// otherwise — a quiet dev server is not killed for being quiet.
func staleChecked(r *store.Record) bool {
	if r.StaleCheck != nil {
		return *r.StaleCheck
	}
	return true
}

// WatchdogNow runs one watchdog pass over a project at once (the timer's
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
