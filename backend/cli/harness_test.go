package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"shepherd/backend/api"
	"shepherd/backend/paths"
	"shepherd/backend/shim"
	"shepherd/backend/store"
	"shepherd/internal/testutil"
)

// shimPath is the real shim, built once for the tests that run a real engine.
var shimPath string

// testShimEnv names a shim already built (the attack suite's re-run as an
// unprivileged user, which cannot build one).
const testShimEnv = "SHEPHERD_TEST_SHIM_BUILT"

// asCLI makes the test binary run as `shepherd` itself, for tests that need
// the engine in a process of its own (signals, SIGKILL).
const asCLI = "SHEPHERD_TEST_RUN_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLI) == "1" {
		os.Exit(Run(os.Args[1:]))
	}
	if os.Getenv(asAttacker) == "1" {
		os.Exit(attackerMain(os.Args[1:]))
	}
	if p := os.Getenv(testShimEnv); p != "" {
		// Re-run by the attack suite as another user: the shim is given.
		shimPath = p
		followPoll = 50 * time.Millisecond
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "shepherd-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	shimPath = filepath.Join(dir, "shepherd-shim")
	out, err := shim.BuildCommand(shimPath).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build the shim: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	followPoll = 50 * time.Millisecond
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// syncBuf is a bytes.Buffer safe for a goroutine writing and a test reading.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// isolate gives the test its own XDG folders and the real shim.
func isolate(t *testing.T) paths.Paths {
	t.Helper()
	p := testutil.Isolate(t)
	t.Setenv(ShimEnv, shimPath)
	t.Setenv("COLUMNS", "") // tables fit 80 columns, whatever runs the tests
	t.Cleanup(func() { killLeftovers(t, p) })
	return p
}

// killLeftovers SIGKILLs the process group of every agent a test left
// running (agents are durable: they outlive the engine on purpose): the
// groups named by records of this test's own data folder that are still live.
func killLeftovers(t *testing.T, p paths.Paths) {
	files, _ := filepath.Glob(filepath.Join(p.Data, "projects", "*", "agents", "*", "record.json"))
	var shims []int
	// The shims write exit.json after the kill: let them finish before the
	// test's folders are removed.
	defer func() { testutil.WaitGone(shims...) }()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var r store.Record
		if json.Unmarshal(b, &r) != nil {
			continue
		}
		if r.ShimPID > 0 {
			shims = append(shims, r.ShimPID)
		}
		for _, pid := range []int{r.ShimPID, r.PID} {
			if pid > 1 && r.Status.Live() {
				if syscall.Kill(-pid, syscall.SIGKILL) == nil {
					t.Logf("killed leftover process group %d of agent %s", pid, r.ID)
				}
			}
		}
	}
}

type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// cli runs one CLI command in this process.
func cli(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, &out, &errb)
	return result{code, out.String(), errb.String()}
}

// ok runs a command that must succeed and returns its stdout.
func ok(t *testing.T, args ...string) string {
	t.Helper()
	r := cli(t, args...)
	if r.code != 0 {
		t.Fatalf("shepherd %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// fails runs a command that must exit with code and say msg on stderr.
func fails(t *testing.T, code int, msg string, args ...string) result {
	t.Helper()
	r := cli(t, args...)
	if r.code != code || !strings.Contains(r.stderr, msg) {
		t.Fatalf("shepherd %s: want exit %d and %q on stderr, got %s", strings.Join(args, " "), code, msg, r)
	}
	return r
}

func okJSON(t *testing.T, out any, args ...string) {
	t.Helper()
	s := ok(t, append([]string{"--json"}, args...)...)
	if err := json.Unmarshal([]byte(s), out); err != nil {
		t.Fatalf("shepherd --json %s: not JSON: %v\n%s", strings.Join(args, " "), err, s)
	}
}

// served is a `shepherd serve` running in a goroutine of the test.
type served struct {
	cancel context.CancelFunc
	done   chan int
	stderr *syncBuf
	code   int
	ended  bool
}

func serve(t *testing.T, p paths.Paths, extra ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{cancel: cancel, done: make(chan int, 1), stderr: &syncBuf{}}
	go func() { s.done <- Main(ctx, append([]string{"serve"}, extra...), io.Discard, s.stderr) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		// engine.json may be a stale one: wait until it names an engine
		// that answers.
		if info, err := api.ReadEngineInfo(p.EngineFile()); err == nil {
			var st api.EngineStatus
			if _, err := api.NewClient(info).JSON(ctx, "GET", "/v1/engine", nil, &st); err == nil {
				break
			}
		}
		select {
		case code := <-s.done:
			t.Fatalf("serve ended with %d before writing engine.json:\n%s", code, s.stderr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not answer through engine.json in 10 s:\n%s", s.stderr)
		}
	}
	t.Cleanup(func() { s.stop(t) })
	return s
}

// stop ends serve as SIGINT would and returns its exit code.
func (s *served) stop(t *testing.T) int {
	t.Helper()
	if s.ended {
		return s.code
	}
	s.cancel()
	select {
	case s.code = <-s.done:
	case <-time.After(15 * time.Second):
		t.Fatalf("serve did not end 15 s after its context was cancelled:\n%s", s.stderr)
	}
	s.ended = true
	return s.code
}

// record reads an agent's record through the CLI.
func record(t *testing.T, project, agent string) store.Record {
	t.Helper()
	var r store.Record
	okJSON(t, &r, "get", project, agent)
	return r
}

// waitStatus polls until the agent has one of the statuses.
func waitStatus(t *testing.T, project, agent string, want ...string) store.Record {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := record(t, project, agent)
		for _, w := range want {
			if string(r.Status) == w {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent %s is %s after 15 s, want one of %v", agent, r.Status, want)
		}
		time.Sleep(30 * time.Millisecond)
	}
}
