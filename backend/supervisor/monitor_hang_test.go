package supervisor

import (
	"context"
	"sync"
	"testing"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/sandbox"
	"shepherd/backend/store"
	"shepherd/internal/testutil"
)

// passSettings: a watchdog pass and a stale check every 30 s, silent for a
// minute is stale, paused for a day expires.
func passSettings(t *testing.T, e *Engine, projectID string) {
	t.Helper()
	s := DefaultSettings()
	s.WatchdogIntervalSec, s.StaleCheckIntervalSec, s.StaleThresholdSec, s.PausedExpiryDays = 30, 30, 60, 1
	if _, err := e.PutSettings(projectID, s); err != nil {
		t.Fatal(err)
	}
}

// watchedProject adds a project with a silent running agent ("idle") and a
// paused one ("napping"): its stale check flags the first, its watchdog
// pass fails the second once it has been paused for a day.
func watchedProject(t *testing.T, h *harness, name string) store.Project {
	t.Helper()
	p, _, err := h.e.AddProject(t.TempDir(), name)
	if err != nil {
		t.Fatal(err)
	}
	passSettings(t, h.e, p.ID)
	for _, id := range []string{"idle", "napping"} {
		if _, err := h.e.CreateAgent(p.ID, AgentSpec{ID: id, Command: "sleep", Args: []string{"300"}, GraceSec: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.e.StartAgent(context.Background(), p.ID, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.e.PauseAgent(context.Background(), p.ID, "napping", true, ""); err != nil {
		t.Fatal(err)
	}
	return p
}

// passesRan waits for p's stale check (idle flagged stale) and watchdog
// pass (napping expired) to have run — without the clock moving on: on time.
func passesRan(t *testing.T, h *harness, p store.Project) {
	t.Helper()
	testutil.Eventually(t, p.Name+"'s stale check", func() bool {
		r, err := h.e.GetAgent(p.ID, "idle")
		return err == nil && r.Stale
	})
	testutil.Eventually(t, p.Name+"'s watchdog pass", func() bool {
		r, err := h.e.GetAgent(p.ID, "napping")
		return err == nil && r.Status == lifecycle.Failed && r.ExitReason == lifecycle.ReasonExpired
	})
}

// A start that hangs — here in the sandbox's first probe, as it would on a
// shim that does not say hello — holds no lock that other work needs: a
// look at the starting agent answers, and its own project's and another
// project's watchdog and stale check run when they are due.
func TestHungStartStallsNoPass(t *testing.T) {
	clk := newFakeClock()
	probing, release := make(chan struct{}), make(chan struct{})
	h := newHarness(t, func(c *Config) {
		c.Clock = clk
		c.SandboxProbe = func() sandbox.Support {
			close(probing)
			<-release
			return sandbox.Support{OS: "linux", LandlockError: "test: the probe ended"}
		}
	})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the engine closes
	passSettings(t, h.e, h.project.ID)
	// In this project "quiet" runs and says nothing, and the start of
	// "boxed" (listed before it) hangs.
	h.create(withID("quiet", AgentSpec{Command: "sleep", Args: []string{"300"}}))
	h.start("quiet")
	h.create(AgentSpec{ID: "boxed", Command: "/bin/true", Permissions: perms()})
	started := make(chan error, 1)
	go func() {
		_, err := h.e.StartAgent(context.Background(), h.project.ID, "boxed")
		started <- err
	}()
	testutil.Receive(t, "the sandbox's probe", probing)
	other := watchedProject(t, h, "other")

	looked := make(chan *store.Record, 1)
	go func() { r, _ := h.e.GetAgent(h.project.ID, "boxed"); looked <- r }()
	if r := testutil.Receive(t, "a look at the starting agent", looked); r == nil || r.Status != lifecycle.NotStarted {
		t.Fatalf("the starting agent: %+v", r)
	}
	if _, err := h.e.StartAgent(context.Background(), h.project.ID, "boxed"); !isKind(err, ErrAlreadyRunning) {
		t.Fatalf("a second start while the first hangs: %v", err)
	}

	clk.Advance(25 * time.Hour) // every pass due; napping paused for over a day
	testutil.Eventually(t, "this project's stale check", func() bool { return h.get("quiet").Stale })
	passesRan(t, h, other)

	unblock()
	err := testutil.Receive(t, "the hung start's end", started)
	wantKind(t, err, ErrSandboxUnavailable, "test: the probe ended")
	if r := h.get("boxed"); r.Status != lifecycle.NotStarted {
		t.Fatalf("after the refused start: %s", r.Status)
	}
}

// Each project's passes run apart: projects whose passes wait (on an agent
// whose lock an operation holds) delay no other project's watchdog and
// stale check.
func TestProjectPassesRunApart(t *testing.T) {
	clk := newFakeClock()
	h := newHarness(t, func(c *Config) { c.Clock = clk })
	passSettings(t, h.e, h.project.ID)
	var held []*agent
	for _, name := range []string{"slow1", "slow2", "slow3"} {
		p, _, err := h.e.AddProject(t.TempDir(), name)
		if err != nil {
			t.Fatal(err)
		}
		passSettings(t, h.e, p.ID)
		if _, err := h.e.CreateAgent(p.ID, AgentSpec{ID: "busy", Command: "sleep", Args: []string{"300"}, GraceSec: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.e.StartAgent(context.Background(), p.ID, "busy"); err != nil {
			t.Fatal(err)
		}
		_, a, err := h.e.agent(p.ID, "busy")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, a)
	}
	other := watchedProject(t, h, "other")
	for _, a := range held {
		a.mu.Lock() // an operation on the agent that takes its time
	}
	released := false
	release := func() {
		if !released {
			released = true
			for _, a := range held {
				a.mu.Unlock()
			}
		}
	}
	t.Cleanup(release)

	clk.Advance(25 * time.Hour)
	passesRan(t, h, other)
	release()
	// The waiting passes end too, and look at what they waited for.
	for _, a := range held {
		testutil.Eventually(t, "a slow project's stale check", func() bool {
			a.mu.Lock()
			defer a.mu.Unlock()
			return a.rec.Stale
		})
	}
}
