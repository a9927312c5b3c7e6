package stats

import (
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"shepherd/backend/procid"
)

type fakeCore struct {
	clk     *clockwork.FakeClock
	ring    Ring
	mu      sync.Mutex
	batches []Batch
}

func (c *fakeCore) Clock() clockwork.Clock { return c.clk }
func (c *fakeCore) Running(projectID string) []Target {
	if projectID != "p" {
		return nil
	}
	return []Target{{AgentID: "a", PID: 42, Ring: &c.ring}}
}
func (c *fakeCore) After(d time.Duration, f func()) { c.clk.AfterFunc(d, f) }
func (c *fakeCore) Emit(event string, data any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batches = append(c.batches, data.(Batch))
}
func (c *fakeCore) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.batches)
}

// Sampling runs while a look's lease lasts and stops after it; a second
// reading gives a CPU rate; the history is bounded and a sample grows old.
func TestSampleWhileLooked(t *testing.T) {
	c := &fakeCore{clk: clockwork.NewFakeClock()}
	s := New(c)
	cpu := time.Duration(0)
	s.usage = func(pid int) (procid.Usage, error) {
		cpu += 10 * time.Millisecond
		return procid.Usage{CPU: cpu, RSS: 1 << 20, Processes: 2}, nil
	}
	if s.Samples() != 0 || c.ring.Fresh(c.clk.Now()) != nil {
		t.Fatal("sampled before anyone looked")
	}
	s.Look("p", 5*time.Second)
	if s.Samples() != 1 {
		t.Fatalf("%d samples after the first look, want 1", s.Samples())
	}
	for i := 0; i < 3; i++ {
		c.clk.BlockUntilContext(t.Context(), 1)
		c.clk.Advance(Interval)
	}
	// Looked at for 5 s: the samples at 0, 2 and 4 s; the tick at 6 s finds
	// the lease over and arms nothing more.
	if err := c.clk.BlockUntilContext(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	if n := s.Samples(); n != 3 {
		t.Fatalf("%d samples over a 5 s look, want 3", n)
	}
	st := c.ring.Fresh(c.clk.Now())
	if st == nil || st.CPUPercent == nil || st.Processes != 2 {
		t.Fatalf("latest sample %+v", st)
	}
	if got := len(c.ring.History()); got != 3 {
		t.Fatalf("history of %d samples", got)
	}
	c.clk.Advance(time.Minute)
	if c.ring.Fresh(c.clk.Now()) != nil {
		t.Fatal("an old sample is still shown")
	}
	for i := 0; i < 2*history; i++ {
		c.ring.add(procid.Usage{}, time.Now(), c.clk.Now())
	}
	if got := len(c.ring.History()); got != history {
		t.Fatalf("history of %d samples, at most %d", got, history)
	}
	if c.count() != 3 {
		t.Fatalf("%d batches pushed", c.count())
	}
	var nilRing *Ring
	if h := nilRing.History(); h == nil || len(h) != 0 || nilRing.Fresh(time.Now()) != nil {
		t.Fatal("a run never sampled has no samples")
	}
}
