package supervisor

import (
	"sync"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/procid"
	"shepherd/backend/store"
)

// CPU and memory per agent: the agent's whole process tree (its CPU use over
// the last interval, its RSS summed), sampled every few seconds ONLY while
// someone is looking — the window showing the project, `shepherd ps`, an
// API client asking for stats, an event stream that wants them. A look is a
// lease (Look); an idle engine with nobody looking samples nothing.

const (
	// StatsInterval is how often agents are sampled while someone looks.
	StatsInterval = 2 * time.Second
	// statsHistory is how many samples an agent keeps (5 minutes).
	statsHistory = 150
	// defaultLease is how long one look keeps sampling on.
	defaultLease = 15 * time.Second
)

// EventAgentStats is pushed after each sample: data is StatsBatch.
const EventAgentStats = "agent:stats"

// StatsBatch is one sample of a project's running agents.
type StatsBatch struct {
	ProjectID string                 `json:"projectId"`
	At        time.Time              `json:"at"`
	Agents    map[string]store.Stats `json:"agents"`
}

// statsState is the engine's sampler: who looks until when, under mu.
type statsState struct {
	mu      sync.Mutex
	leases  map[string]time.Time // project id → looked at until
	running bool                 // a sampling timer is armed
	samples int64                // samples taken (for tests and benches)
}

// sampleRing is one run's recent samples, under a.mu.
type sampleRing struct {
	prevCPU time.Duration
	prevAt  time.Time // real time of the previous reading (CPU time is real time)
	last    *store.Stats
	hist    []store.Stats
}

// Look says someone looks at a project's agents for d (0: the default
// lease): they are sampled every StatsInterval until then.
func (e *Engine) Look(projectID string, d time.Duration) error {
	p, err := e.project(projectID)
	if err != nil {
		return err
	}
	if d <= 0 {
		d = defaultLease
	}
	e.stats.mu.Lock()
	if e.stats.leases == nil {
		e.stats.leases = map[string]time.Time{}
	}
	until := e.clock.Now().Add(d)
	if until.After(e.stats.leases[p.info.ID]) {
		e.stats.leases[p.info.ID] = until
	}
	start := !e.stats.running
	e.stats.running = true
	e.stats.mu.Unlock()
	if start {
		e.sampleOnce(p) // a first reading now, so the next tick has a rate
		e.armSampler()
	}
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
	fresh := true
	for _, a := range p.list() {
		a.mu.Lock()
		if a.run != nil && a.rec.Status.Live() {
			if s := e.freshStats(a); s == nil || s.CPUPercent == nil {
				fresh = false
			}
		}
		a.mu.Unlock()
	}
	if err := e.Look(projectID, 0); err != nil {
		return err
	}
	if !fresh {
		time.Sleep(500 * time.Millisecond)
		e.sampleOnce(p)
	}
	return nil
}

// SampleNow samples a project's running agents once, at once (the
// sampler's work, for `bench/` and diagnostics).
func (e *Engine) SampleNow(projectID string) error {
	p, err := e.project(projectID)
	if err != nil {
		return err
	}
	e.sampleOnce(p)
	return nil
}

// Samples is how many agent samples the engine has taken.
func (e *Engine) Samples() int64 {
	e.stats.mu.Lock()
	defer e.stats.mu.Unlock()
	return e.stats.samples
}

func (e *Engine) armSampler() {
	e.after(e.ctx, StatsInterval, func() {
		now := e.clock.Now()
		e.stats.mu.Lock()
		var ids []string
		for id, until := range e.stats.leases {
			if now.After(until) {
				delete(e.stats.leases, id)
				continue
			}
			ids = append(ids, id)
		}
		if len(ids) == 0 {
			e.stats.running = false // nobody looks: nothing more is sampled
			e.stats.mu.Unlock()
			return
		}
		e.stats.mu.Unlock()
		for _, id := range ids {
			e.mu.Lock()
			p := e.projects[id]
			e.mu.Unlock()
			if p != nil {
				e.sampleOnce(p)
			}
		}
		e.armSampler()
	})
}

// sampleOnce samples every running agent of p and pushes the batch.
func (e *Engine) sampleOnce(p *project) {
	batch := StatsBatch{ProjectID: p.info.ID, At: e.clock.Now().UTC(), Agents: map[string]store.Stats{}}
	for _, a := range p.list() {
		a.mu.Lock()
		rn := a.run
		if rn == nil || !a.rec.Status.Live() {
			a.mu.Unlock()
			continue
		}
		pid := rn.pid()
		a.mu.Unlock()
		u, err := procid.TreeUsage(pid) // outside the lock: it reads /proc
		now := time.Now()
		a.mu.Lock()
		if err == nil && a.run == rn {
			s := store.Stats{RSSBytes: u.RSS, Processes: u.Processes, SampledAt: batch.At}
			r := &rn.samples
			if !r.prevAt.IsZero() && now.After(r.prevAt) {
				pct := 100 * float64(u.CPU-r.prevCPU) / float64(now.Sub(r.prevAt))
				s.CPUPercent = &pct
			}
			r.prevCPU, r.prevAt = u.CPU, now
			r.last = &s
			r.hist = append(r.hist, s)
			if len(r.hist) > statsHistory {
				r.hist = append(r.hist[:0:0], r.hist[len(r.hist)-statsHistory:]...)
			}
			batch.Agents[a.rec.ID] = s
			e.stats.mu.Lock()
			e.stats.samples++
			e.stats.mu.Unlock()
		}
		a.mu.Unlock()
	}
	if len(batch.Agents) > 0 {
		e.emit(EventAgentStats, batch)
	}
}

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
	return append([]store.Stats{}, a.run.samples.hist...), nil
}

// freshStats is the run's latest sample if it is recent. a.mu is held.
func (e *Engine) freshStats(a *agent) *store.Stats {
	rn := a.run
	if rn == nil || rn.samples.last == nil || a.rec.Status == lifecycle.NotStarted {
		return nil
	}
	if e.clock.Since(rn.samples.last.SampledAt) > 3*StatsInterval {
		return nil
	}
	s := *rn.samples.last
	return &s
}
