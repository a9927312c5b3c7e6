package supervisor

import (
	"time"

	"shepherd/backend/procid"
	"shepherd/backend/store"
)

// Busy or hung (SPEC "Stale check"). An agent whose log has stopped
// growing is silent; a silent agent is busy — not stale — while a tool call
// is in flight and it has a live descendant process (the tool's), or while
// its process tree uses CPU. Claude Code runs a long Bash tool (a test
// suite, a build) without printing: without this, a working agent would be
// killed and resumed every few minutes. /proc is read only for silent
// agents, once per stale check.

const (
	// cpuFloor is the CPU use, in cores, above which a silent agent's
	// processes are taken to be working.
	cpuFloor = 0.01
	// cpuWindow is how long a CPU sample is taken over when no earlier
	// sample of the agent exists at the moment it would be found stale.
	cpuWindow = 250 * time.Millisecond
	// activeWindow bounds how long after its log's last growth an agent
	// counts as working (less when the stale threshold is shorter).
	activeWindow = 60 * time.Second
)

// busyState is what the engine knows of a silent agent's work; under a.mu.
type busyState struct {
	busy  bool
	tool  string    // the tool in flight, or "cpu"
	since time.Time // engine clock: when it became busy

	cpu      time.Duration // the tree's CPU time at the last sample
	cpuAt    time.Time     // real time of that sample (CPU time is real time)
	cpuKnown bool          // a rate was measured (two samples)
}

func workingWindow(s Settings) time.Duration {
	return min(activeWindow, secs(s.StaleThresholdSec)/2)
}

// lookBusy reads /proc for a silent agent: is a tool in flight with a live
// descendant, does the tree use CPU since the last look. a.mu is held.
func (e *Engine) lookBusy(rn *run) {
	b := &rn.busy
	wasBusy, wasTool := b.busy, b.tool
	b.busy, b.tool = false, ""
	if tool, since, ok := rn.inFlight(); ok && len(procid.Descendants(rn.pid())) > 0 {
		b.busy, b.tool, b.since = true, tool, since
	}
	if u, err := procid.TreeUsage(rn.pid()); err == nil {
		now := time.Now()
		switch {
		case b.cpuAt.IsZero():
			b.cpu, b.cpuAt = u.CPU, now
		case now.Sub(b.cpuAt) < cpuWindow:
			// Too close to the last sample for a rate to mean anything (a
			// few scheduler ticks over a few milliseconds look like a busy
			// core): keep the last verdict and the older sample, so the
			// window grows until it says something.
			if !b.busy && wasBusy && wasTool == "cpu" {
				b.busy, b.tool = true, "cpu"
			}
		default:
			b.cpuKnown = true
			if !b.busy && cpuRate(u.CPU-b.cpu, now.Sub(b.cpuAt)) >= cpuFloor {
				b.busy, b.tool = true, "cpu"
				if !wasBusy {
					b.since = e.clock.Now()
				}
			}
			b.cpu, b.cpuAt = u.CPU, now
		}
	}
}

// notBusy forgets what was measured while the agent was silent. a.mu is held.
func (rn *run) notBusy() { rn.busy = busyState{} }

// usesCPUNow samples the tree's CPU over cpuWindow (real time): for an agent
// about to be found stale with no earlier sample to compare with. Without
// a.mu.
func usesCPUNow(pid int) bool {
	u1, err := procid.TreeUsage(pid)
	if err != nil {
		return false
	}
	start := time.Now()
	time.Sleep(cpuWindow)
	u2, err := procid.TreeUsage(pid)
	if err != nil {
		return false
	}
	return cpuRate(u2.CPU-u1.CPU, time.Since(start)) >= cpuFloor
}

// cpuRate is the CPU used over an interval, in cores, less one unit of the
// CPU times' resolution: the times are rounded to clock ticks on Linux, so
// an idle process can appear to have used a whole tick (10 ms — 4 % of a
// core over a 250 ms sample) when it crossed a tick boundary.
func cpuRate(used, over time.Duration) float64 {
	if over <= 0 {
		return 0
	}
	return float64(used-procid.CPUResolution) / float64(over)
}

// inFlight is the tool call in flight in the run's log, and since when
// (engine clock).
func (rn *run) inFlight() (string, time.Time, bool) {
	rn.scanMu.Lock()
	defer rn.scanMu.Unlock()
	return rn.tool, rn.toolSince, rn.tool != ""
}

// shown is what an agent is doing, as far as the window shows it: a change
// of any of it is pushed, nothing else is.
type shown struct {
	state, tool, waiting string
}

// doing is what the agent is doing now, and when its log last grew. a.mu
// is held; rn is a.run. It allocates nothing: every stale check asks it of
// every running agent.
func (e *Engine) doing(a *agent, rn *run, s Settings) (shown, time.Time) {
	last := rn.lastActivityTime()
	switch w := rn.wait.What(); {
	case w != nil:
		return shown{state: store.ActivityWaiting, waiting: w.What}, last
	case a.rec.Stale:
		return shown{state: store.ActivityStale}, last
	case e.clock.Since(last) < workingWindow(s):
		return shown{state: store.ActivityWorking}, last
	case rn.busy.busy:
		return shown{state: store.ActivityBusy, tool: rn.busy.tool}, last
	}
	return shown{state: store.ActivitySilent}, last
}

// activity is what the agent is doing now, as the record says it. a.mu is
// held; rn is a.run.
func (e *Engine) activity(a *agent, rn *run, s Settings) *store.Activity {
	now, last := e.doing(a, rn, s)
	act := &store.Activity{State: now.state, Tool: now.tool, Waiting: now.waiting}
	if !last.IsZero() {
		t := last.UTC()
		act.Since = &t
	}
	switch now.state {
	case store.ActivityWaiting:
		w := rn.wait.What()
		act.NeedsYou = w.NeedsYou
		if w.Until != nil {
			t := w.Until.UTC()
			act.Until = &t
		}
	case store.ActivityBusy:
		t := rn.busy.since.UTC()
		act.ToolSince = &t
	}
	return act
}

// showActivity pushes the agent's state when what it is doing changed
// (working, busy with another tool, silent, stale, waiting for something
// else): the cost of a look at an agent whose activity is as it was is a
// comparison. a.mu is held.
func (e *Engine) showActivity(a *agent, rn *run) {
	e.showActivityWith(a, rn, e.settingsOf(a.rec.ProjectID))
}

// showActivityWith is showActivity with the project's settings at hand (a
// pass over every agent of a project).
func (e *Engine) showActivityWith(a *agent, rn *run, s Settings) {
	now, _ := e.doing(a, rn, s)
	if rn.shown == now {
		return
	}
	rn.shown = now
	e.emit(EventAgentState, e.snapshot(a))
}
