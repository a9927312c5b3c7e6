package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"

	"shepherd/backend/lifecycle"
	"shepherd/backend/notify"
	"shepherd/backend/procid"
	"shepherd/backend/shim"
	"shepherd/backend/store"
	"shepherd/internal/testutil"
)

var shimPath, fakeClaude, fakeCodex, sbProbe string

func TestMain(m *testing.M) {
	if os.Getenv("SHEPHERD_TEST_ENGINE") != "" {
		os.Exit(runChildEngine())
	}
	dir, err := os.MkdirTemp("", "shepherd-shim-")
	if err != nil {
		panic(err)
	}
	shimPath = filepath.Join(dir, "shepherd-shim")
	fakeClaude = filepath.Join(dir, "claude")
	fakeCodex = filepath.Join(dir, "codex")
	sbProbe = filepath.Join(dir, "sbprobe")
	for bin, pkg := range map[string]string{shimPath: "shepherd/backend/shim/cmd/shepherd-shim",
		fakeClaude: "shepherd/backend/supervisor/testdata/fakeclaude", fakeCodex: "shepherd/backend/supervisor/testdata/fakecodex",
		sbProbe: "shepherd/backend/supervisor/testdata/sbprobe"} {
		cmd := exec.Command("go", "build", "-o", bin, pkg)
		if pkg == shim.Package {
			cmd = shim.BuildCommand(bin)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", pkg, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// recorder is an Emitter and a Notifier that keeps what it was given.
type recorder struct {
	mu      sync.Mutex
	events  []string
	states  []*store.Record
	notices []notify.Notification
}

func (r *recorder) Emit(event string, data any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event)
	if rec, ok := data.(*store.Record); ok {
		r.states = append(r.states, rec)
	}
}

func (r *recorder) Notify(n notify.Notification) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notices = append(r.notices, n)
}

func (r *recorder) notes(kind string) []notify.Notification {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []notify.Notification
	for _, n := range r.notices {
		if n.Kind == kind {
			out = append(out, n)
		}
	}
	return out
}

func (r *recorder) statuses(agentID string) []lifecycle.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []lifecycle.Status
	for _, s := range r.states {
		if s.ID == agentID && (len(out) == 0 || out[len(out)-1] != s.Status) {
			out = append(out, s.Status)
		}
	}
	return out
}

type harness struct {
	t       *testing.T
	data    string
	e       *Engine
	rec     *recorder
	project store.Project
}

// newHarness starts an engine over a fresh data folder with one project.
func newHarness(t *testing.T, mods ...func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, data: filepath.Join(t.TempDir(), "data"), rec: &recorder{}}
	h.e = h.engine(mods...)
	p, created, err := h.e.AddProject(t.TempDir(), "proj")
	if err != nil || !created {
		t.Fatalf("AddProject: %v created=%v", err, created)
	}
	h.project = p
	return h
}

// engine opens another engine over the harness's data folder.
func (h *harness) engine(mods ...func(*Config)) *Engine {
	h.t.Helper()
	cfg := Config{DataDir: h.data, ShimPath: shimPath, Emitter: h.rec, Notifier: h.rec, Logger: zerolog.Nop(),
		LogPoll: 20 * time.Millisecond,
		// Every notification as it comes: tests count them. The storm
		// coalescing has its own tests (notify, TestCrashLoopStormIsCalm).
		NotifyWindow: -1}
	for _, m := range mods {
		m(&cfg)
	}
	e, err := New(cfg)
	if err != nil {
		h.t.Fatalf("New: %v", err)
	}
	h.t.Cleanup(func() {
		e.Close()
		killAgents(h.t, e)
	})
	return e
}

// killAgents ends every process group this test's agents may have left.
func killAgents(t *testing.T, e *Engine) {
	var shims []int
	for _, r := range e.AllAgents() {
		if r.PID > 0 && procid.Compare(r.PID, r.ProcessStartTime) == procid.Same {
			_ = syscall.Kill(-r.PID, syscall.SIGKILL)
		}
		if r.ShimPID > 0 {
			shims = append(shims, r.ShimPID)
		}
	}
	// The shims write exit.json after the kill; let them finish before the
	// test's folders are removed.
	testutil.WaitGone(shims...)
}

func (h *harness) create(spec AgentSpec) *store.Record {
	h.t.Helper()
	if spec.GraceSec == 0 {
		spec.GraceSec = 2
	}
	r, err := h.e.CreateAgent(h.project.ID, spec)
	if err != nil {
		h.t.Fatalf("CreateAgent(%s): %v", spec.ID, err)
	}
	return r
}

func (h *harness) start(id string) *store.Record {
	h.t.Helper()
	r, err := h.e.StartAgent(context.Background(), h.project.ID, id)
	if err != nil {
		h.t.Fatalf("StartAgent(%s): %v", id, err)
	}
	return r
}

func (h *harness) get(id string) *store.Record {
	h.t.Helper()
	r, err := h.e.GetAgent(h.project.ID, id)
	if err != nil {
		h.t.Fatalf("GetAgent(%s): %v", id, err)
	}
	return r
}

// waitStatus polls the engine until the agent has status want.
func (h *harness) waitStatus(id string, want lifecycle.Status) *store.Record {
	h.t.Helper()
	deadline := time.Now().Add(testutil.Patience)
	for {
		r := h.get(id)
		if r.Status == want {
			return r
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("agent %s: status %s after %s, want %s (error %q)", id, r.Status, testutil.Patience, want, r.Error)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitLog waits until the agent's log holds text (an agent says it is
// ready, e.g. its signal traps are set).
func (h *harness) waitLog(id, text string) {
	h.t.Helper()
	testutil.Eventually(h.t, id+" to log "+text, func() bool {
		b, _ := os.ReadFile(h.get(id).LogPath)
		return strings.Contains(string(b), text)
	})
}

// diskRecord reads the record file as the next engine would.
func (h *harness) diskRecord(id string) *store.Record {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join(h.e.Store().AgentDir(h.project.ID, id), "record.json"))
	if err != nil {
		h.t.Fatal(err)
	}
	r, err := store.ParseRecord(b)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

func (h *harness) events() string {
	h.t.Helper()
	b, err := os.ReadFile(h.e.Store().EventsPath(h.project.ID))
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

func sh(script string) AgentSpec {
	return AgentSpec{Command: "/bin/sh", Args: []string{"-c", script}}
}

func withID(id string, s AgentSpec) AgentSpec { s.ID = id; return s }

func wantKind(t *testing.T, err, kind error, msg string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error %v, want kind %v", err, kind)
	}
	if msg != "" && !strings.Contains(err.Error(), msg) {
		t.Fatalf("error %q does not say %q", err.Error(), msg)
	}
}

// groupMembers lists the live pids of process group pgid.
func groupMembers(pgid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+2:])
		var pg int
		fmt.Sscanf(f[2], "%d", &pg)
		if pg == pgid && f[0] != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// settle waits until every timer due by now has run and no recovery or
// notification is under way (see Engine.settle): the barrier that lets a
// test assert that something did not happen.
func (h *harness) settle() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.e.settle(ctx); err != nil {
		h.t.Fatal(err)
	}
}

func newFakeClock() *clockwork.FakeClock { return clockwork.NewFakeClockAt(time.Now()) }

func writeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func removeFile(path string) { os.Remove(path) }
