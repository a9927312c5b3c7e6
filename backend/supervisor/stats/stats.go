// Package stats is the CPU and memory of each running agent: its whole
// process tree (its CPU use over the last interval, its RSS summed), sampled
// every few seconds ONLY while someone is looking — the window showing the
// project, `shepherd ps`, an API client asking for stats, an event stream
// that wants them. A look is a lease (Look); an idle engine with nobody
// looking samples nothing, and a run nobody looked at has no samples at all.
package stats

import (
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"shepherd/backend/procid"
	"shepherd/backend/store"
)

const (
	// Interval is how often agents are sampled while someone looks.
	Interval = 2 * time.Second
	// history is how many samples a run keeps (5 minutes).
	history = 150
	// DefaultLease is how long one look keeps sampling on.
	DefaultLease = 15 * time.Second
	// fresh is how old a sample may be and still be shown.
	fresh = 3 * Interval
)

// EventName is pushed after each sample: data is Batch.
const EventName = "agent:stats"

// Batch is one sample of a project's running agents.
type Batch struct {
	ProjectID string                 `json:"projectId"`
	At        time.Time              `json:"at"`
	Agents    map[string]store.Stats `json:"agents"`
}

// Ring is one run's recent samples. Safe for concurrent use (its lock is a
// leaf); the zero Ring is empty, and so is a nil one.
type Ring struct {
	mu      sync.Mutex
	prevCPU time.Duration
	prevAt  time.Time // real time of the previous reading (CPU time is real time)
	last    *store.Stats
	hist    []store.Stats
}

// add records a reading u of the run's tree taken at real time now, stamped
// at (the engine's clock), and returns the sample.
func (r *Ring) add(u procid.Usage, now, at time.Time) store.Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := store.Stats{RSSBytes: u.RSS, Processes: u.Processes, SampledAt: at}
	if !r.prevAt.IsZero() && now.After(r.prevAt) {
		pct := 100 * float64(u.CPU-r.prevCPU) / float64(now.Sub(r.prevAt))
		s.CPUPercent = &pct
	}
	r.prevCPU, r.prevAt = u.CPU, now
	r.last = &s
	r.hist = append(r.hist, s)
	if len(r.hist) > history {
		r.hist = append(r.hist[:0:0], r.hist[len(r.hist)-history:]...)
	}
	return s
}

// Fresh is the latest sample if it is recent (at now, engine clock); nil
// otherwise.
func (r *Ring) Fresh(now time.Time) *store.Stats {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil || now.Sub(r.last.SampledAt) > fresh {
		return nil
	}
	s := *r.last
	return &s
}

// History is the run's samples, oldest first (empty, never nil, when there
// are none).
func (r *Ring) History() []store.Stats {
	if r == nil {
		return []store.Stats{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]store.Stats{}, r.hist...)
}

// Target is one running agent to sample: its id, the pid of its process
// tree's root, and its run's ring.
type Target struct {
	AgentID string
	PID     int
	Ring    *Ring
}

// Core is what the sampler needs of the engine.
type Core interface {
	Clock() clockwork.Clock
	// Running is a project's running agents (none for a project it does not
	// know).
	Running(projectID string) []Target
	// After runs f after d on the engine's clock, as one of its tasks
	// (never once it is closing).
	After(d time.Duration, f func())
	Emit(event string, data any)
}

// Sampler samples the projects someone looks at.
type Sampler struct {
	core Core
	// usage reads a process tree (procid.TreeUsage; tests replace it).
	usage func(pid int) (procid.Usage, error)

	mu      sync.Mutex
	leases  map[string]time.Time // project id → looked at until
	running bool                 // a sampling timer is armed
	samples int64                // samples taken (for tests and benches)
}

// New returns a sampler over core.
func New(core Core) *Sampler {
	return &Sampler{core: core, usage: procid.TreeUsage, leases: map[string]time.Time{}}
}

// Look says someone looks at a project's agents for d (0: DefaultLease):
// they are sampled every Interval until then.
func (s *Sampler) Look(projectID string, d time.Duration) {
	if d <= 0 {
		d = DefaultLease
	}
	s.mu.Lock()
	until := s.core.Clock().Now().Add(d)
	if until.After(s.leases[projectID]) {
		s.leases[projectID] = until
	}
	start := !s.running
	s.running = true
	s.mu.Unlock()
	if start {
		s.Sample(projectID) // a first reading now, so the next tick has a rate
		s.arm()
	}
}

// Now makes sure the running agents of a project have a sample with a CPU
// rate (taking two readings 500 ms apart when none is fresh), for a client
// that asks once (`shepherd ps --json`), and keeps sampling for the default
// lease.
func (s *Sampler) Now(projectID string) {
	now := s.core.Clock().Now()
	fresh := true
	for _, t := range s.core.Running(projectID) {
		if st := t.Ring.Fresh(now); st == nil || st.CPUPercent == nil {
			fresh = false
		}
	}
	s.Look(projectID, 0)
	if !fresh {
		time.Sleep(500 * time.Millisecond) // real time: CPU time is
		s.Sample(projectID)
	}
}

// Samples is how many agent samples were taken.
func (s *Sampler) Samples() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}

func (s *Sampler) arm() {
	s.core.After(Interval, func() {
		now := s.core.Clock().Now()
		s.mu.Lock()
		var ids []string
		for id, until := range s.leases {
			if now.After(until) {
				delete(s.leases, id)
				continue
			}
			ids = append(ids, id)
		}
		if len(ids) == 0 {
			s.running = false // nobody looks: nothing more is sampled
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		for _, id := range ids {
			s.Sample(id)
		}
		s.arm()
	})
}

// Sample samples every running agent of a project once and pushes the
// batch.
func (s *Sampler) Sample(projectID string) {
	batch := Batch{ProjectID: projectID, At: s.core.Clock().Now().UTC(), Agents: map[string]store.Stats{}}
	for _, t := range s.core.Running(projectID) {
		u, err := s.usage(t.PID) // reads /proc: no lock of the engine's is held
		if err != nil {
			continue
		}
		batch.Agents[t.AgentID] = t.Ring.add(u, time.Now(), batch.At)
		s.mu.Lock()
		s.samples++
		s.mu.Unlock()
	}
	if len(batch.Agents) > 0 {
		s.core.Emit(EventName, batch)
	}
}
