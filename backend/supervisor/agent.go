package supervisor

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"shepherd/backend/filewatch"
	"shepherd/backend/lifecycle"
	"shepherd/backend/loganalysis"
	"shepherd/backend/proc"
	"shepherd/backend/procid"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/budget"
	"shepherd/backend/supervisor/figures"
	"shepherd/backend/supervisor/needsyou"
	"shepherd/backend/supervisor/queue"
	"shepherd/backend/supervisor/stats"
)

type project struct {
	info store.Project

	q     queue.State // its run queue and its pause (package queue)
	daily budget.Hold // its daily budget's hold (package budget)
	cost  figures.Day // what its runs cost today (package figures)

	mu       sync.Mutex
	loaded   bool
	loading  chan struct{} // non-nil while the first load runs; closed at its end
	loadErr  error
	agents   map[string]*agent
	corrupt  []CorruptRecord
	settings Settings
	monitor  *monitor // the watchdog and stale timers, from load until removal
	// unreported holds what loads found that no select has reported yet.
	unreported map[string]AgentOutcome
}

func newProject(info store.Project) *project {
	return &project{info: info, agents: map[string]*agent{}}
}

// list returns the project's agents in the order of their ids.
func (p *project) list() []*agent {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := make([]string, 0, len(p.agents))
	for id := range p.agents {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]*agent, len(ids))
	for i, id := range ids {
		out[i] = p.agents[id]
	}
	return out
}

// agent is one managed agent. Its lifetime (life) ends when it is removed or
// the engine closes: every timer and task of the agent checks it, so that a
// removed agent never writes a record or starts a process again.
type agent struct {
	p    *project
	mu   sync.Mutex // held by every operation on this agent
	rec  *store.Record
	run  *run // the live run this engine watches, nil if none
	life context.Context
	end  context.CancelFunc

	starting   chan struct{} // a start under way, closed at its end (startLocked)
	recovering bool          // one recovery at a time
	// refusedSession is the last session id read from its log that was
	// refused (not one its CLI gives): said once, not again at each look.
	refusedSession string
	restartTimer   clockwork.Timer // a pending keep-alive restart
	restartGen     int             // tells a cancelled restart's late callback from the current one
	unsaved        bool            // its record in memory is newer than on disk (a full disk): written again (disk.go)
}

func (e *Engine) newAgent(p *project, rec *store.Record) *agent {
	a := &agent{p: p, rec: rec}
	a.life, a.end = context.WithCancel(e.ctx)
	return a
}

// gone reports whether the agent was removed (or the engine is closing).
// a.mu is held.
func (a *agent) gone() bool { return a.life.Err() != nil }

// awaitStart waits, without a.mu, for a start of a under way to end (it
// lets go of the agent's lock while the shim starts): what a stop, a pause
// or a remove does comes after it. a.mu is held, and held again on return;
// false when ctx ended first.
func (e *Engine) awaitStart(ctx context.Context, a *agent) bool {
	for a.starting != nil {
		ch := a.starting
		a.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			a.mu.Lock()
			return false
		}
		a.mu.Lock()
	}
	return true
}

// id is the agent's id, for a caller without a.mu.
func (a *agent) id() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rec.ID
}

// The agent as the features see it (hook.Agent).

func (a *agent) Lock()              { a.mu.Lock() }
func (a *agent) Unlock()            { a.mu.Unlock() }
func (a *agent) Rec() *store.Record { return a.rec }
func (a *agent) Gone() bool         { return a.gone() }

// run is one live process of an agent, as this engine watches it.
type run struct {
	p *proc.Process
	// handled is closed once the engine has recorded the run's end (by
	// whichever path saw it first); exactly once, on every path.
	handled     chan struct{}
	handledOnce sync.Once

	timer    clockwork.Timer // timeoutSec
	stopDone chan struct{}   // non-nil while a stop is under way; closed at its end
	stopErr  error
	// firstSent: the stop's first signal was sent when it began (beginStop).
	firstSent bool

	// forced, when set, is how the run's end is recorded instead of by its
	// exit code (the engine ended it: result line, stale recovery).
	forced *outcome

	suspect bool            // the watchdog found the process gone on its last pass
	check   *procid.Tracked // the watchdog's look at the process (its /proc entry kept open between passes)
	busy    busyState       // what a silent agent is doing (busy.go), under a.mu
	samples *stats.Ring     // CPU and memory while someone looks (package stats; made at its first sample, under a.mu)
	shown   shown           // the activity last pushed, under a.mu
	// wait is what the agent waits for (a permission, input, a rate
	// limit), from its hooks or its log (package needsyou), under a.mu.
	wait needsyou.Wait

	// Live reading of the log (activity.go), under scanMu.
	logPath      string
	logWatch     *filewatch.Watch // with WatchFiles: the log's changes
	scanMu       sync.Mutex
	scanner      *loganalysis.Scanner // nil for profiles that learn nothing
	logOff       int64                // how far the scanner has read
	logSize      int64                // the log's size at the last look
	lastActivity time.Time            // engine clock: the last growth seen
	quietTicks   int                  // poller ticks since the last look at a quiet log
	result       *loganalysis.Claude
	budget       *budget.Hit // the per-run limit the result reached (package budget)
	// judged is the result line sawResult has judged (under a.mu): one read
	// by another look that lost the race to the run's end is judged there.
	judged      *loganalysis.Claude
	tool        string             // the tool call in flight ("" if none)
	toolID      string             // its id
	toolSince   time.Time          // engine clock: when it was first seen
	retry       *loganalysis.Retry // an API call being retried (its latest line is api_retry)
	resultTimer clockwork.Timer
	stable      clockwork.Timer // resets the keep-alive backoff after a stable run
}

func newRun(p *proc.Process) *run {
	return &run{p: p, handled: make(chan struct{})}
}

// pid is the agent's pid (the leader of its process group).
func (rn *run) pid() int { return rn.p.PID }

// finish marks the run's end as recorded.
func (rn *run) finish() {
	rn.handledOnce.Do(func() { close(rn.handled) })
}

// stopTimers stops the run's timers and releases the watchdog's look at
// its process. a.mu is held.
func (rn *run) stopTimers() {
	for _, t := range []clockwork.Timer{rn.timer, rn.resultTimer, rn.stable} {
		if t != nil {
			t.Stop()
		}
	}
	if rn.check != nil {
		rn.check.Close()
	}
	if rn.logWatch != nil {
		rn.logWatch.Stop()
	}
}

// outcome is a final status the engine decided for a run.
type outcome struct {
	status lifecycle.Status
	reason lifecycle.ExitReason
	msg    string
}

// activityAt is the last growth of the run's log the engine saw (nil:
// none yet).
func (rn *run) activityAt() *time.Time {
	rn.scanMu.Lock()
	defer rn.scanMu.Unlock()
	if rn.lastActivity.IsZero() {
		return nil
	}
	t := rn.lastActivity.UTC()
	return &t
}

// snapshot is the record as callers see it: a copy, with the activity the
// engine saw since the last write. a.mu is held.
func (e *Engine) snapshot(a *agent) *store.Record {
	r := a.rec.Clone()
	if rn := a.run; rn != nil {
		if t := rn.activityAt(); t != nil {
			r.LastActivityAt = t
		}
		if r.Status == lifecycle.Running {
			r.Activity = e.activity(a, rn, e.settingsOf(r.ProjectID))
		}
	}
	if r.Status == lifecycle.Queued {
		r.QueuePosition = a.p.q.Position(a)
	}
	r.Stats = e.freshStats(a)
	r.Attention = needsyou.Reason(r, e.clock.Now())
	return r
}
