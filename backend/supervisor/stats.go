package supervisor

import (
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/stats"
)

// CPU and memory per agent are package stats': sampled only while someone
// looks.

// StatsInterval is how often agents are sampled while someone looks.
const StatsInterval = stats.Interval

// EventAgentStats is pushed after each sample: data is StatsBatch.
const EventAgentStats = stats.EventName

// StatsBatch is one sample of a project's running agents.
type StatsBatch = stats.Batch

// Look says someone looks at a project's agents for d (0: the default
// lease): they are sampled every StatsInterval until then.
func (e *Engine) Look(projectID string, d time.Duration) error {
	p, err := e.project(projectID)
	if err != nil {
		return err
	}
	e.stats.Look(p.info.ID, d)
	return nil
}

// StatsNow makes sure the running agents of a project have a sample with a
// CPU rate (taking two readings 500 ms apart when none is fresh), for a
// client that asks once (`shepherd ps --json`), and keeps sampling for the
// default lease.
func (e *Engine) StatsNow(projectID string) error {
	p, err := e.project(projectID)
	if err != nil {
		return err
	}
	e.stats.Now(p.info.ID)
	return nil
}

// SampleNow samples a project's running agents once, at once (the
// sampler's work, for `bench/` and diagnostics).
func (e *Engine) SampleNow(projectID string) error {
	p, err := e.project(projectID)
	if err != nil {
		return err
	}
	e.stats.Sample(p.info.ID)
	return nil
}

// Samples is how many agent samples the engine has taken.
func (e *Engine) Samples() int64 { return e.stats.Samples() }

// StatsHistory is an agent's recent samples, oldest first (empty when it is
// not running or nobody looked).
func (e *Engine) StatsHistory(projectID, agentID string) ([]store.Stats, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.run == nil {
		return []store.Stats{}, nil
	}
	return a.run.samples.History(), nil
}

// freshStats is the run's latest sample if it is recent. a.mu is held.
func (e *Engine) freshStats(a *agent) *store.Stats {
	if a.run == nil || a.rec.Status == lifecycle.NotStarted {
		return nil
	}
	return a.run.samples.Fresh(e.clock.Now())
}

// Running is a project's running agents, for the sampler: each run's ring
// is made at its first sample.
func (c core) Running(projectID string) []stats.Target {
	e := c.e
	e.mu.Lock()
	p := e.projects[projectID]
	e.mu.Unlock()
	if p == nil {
		return nil
	}
	var out []stats.Target
	for _, a := range p.list() {
		a.mu.Lock()
		if rn := a.run; rn != nil && a.rec.Status.Live() {
			if rn.samples == nil {
				rn.samples = &stats.Ring{}
			}
			out = append(out, stats.Target{AgentID: a.rec.ID, PID: rn.pid(), Ring: rn.samples})
		}
		a.mu.Unlock()
	}
	return out
}
