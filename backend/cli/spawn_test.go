package cli

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"shepherd/backend/api"
	"shepherd/backend/engine"
	"shepherd/backend/instance"
	"shepherd/internal/testutil"
)

// The window starts the engine detached: in a session of its own (so that
// it outlives the window, and a signal to the window's group misses it),
// and returns once it answers. A second start while one runs finds that one.
// `shepherd quit` tells the engine's clients (engine:quit, so the windows
// close) and ends it.
func TestStartEngineDetached(t *testing.T) {
	p := isolate(t)
	t.Setenv(asCLI, "1") // the test binary is the engine
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	info, err := engine.StartEngine(ctx, exe, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Kill(info.PID, unix.SIGKILL) })
	// Whatever engine holds this test's data folder at its end (the second
	// start's own process, should it outlive the first) ends with the test.
	t.Cleanup(func() {
		if l, err := instance.Acquire(p.LockFile()); err == nil {
			_ = l.Release() // nobody holds it
			return
		}
		if b, err := os.ReadFile(p.LockFile()); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 && pid != os.Getpid() {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
	})
	if info.PID == os.Getpid() {
		t.Fatal("the engine runs in the caller")
	}
	if sid, err := unix.Getsid(info.PID); err != nil || sid != info.PID {
		t.Fatalf("the engine's session is %d (%v), want one of its own (%d)", sid, err, info.PID)
	}
	again, err := engine.StartEngine(ctx, exe, p)
	if err != nil || again.PID != info.PID {
		t.Fatalf("a second start: %+v %v; want the running engine (pid %d)", again, err, info.PID)
	}

	var mu sync.Mutex
	var names []string
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	go api.NewClient(info).Stream(sctx, api.StreamIn{}, func(ev api.StreamEvent) error {
		mu.Lock()
		names = append(names, ev.Name)
		mu.Unlock()
		return nil
	})
	seen := func(name string) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range names {
			if n == name {
				return true
			}
		}
		return false
	}
	testutil.Eventually(t, "the event stream", func() bool { return seen("hello") })
	if out := ok(t, "quit"); !strings.Contains(out, "has quit") {
		t.Fatalf("quit: %q", out)
	}
	testutil.Eventually(t, "engine:quit to reach the client", func() bool { return seen(EventEngineQuit) })
	testutil.Eventually(t, "the engine to end", func() bool { return unix.Kill(info.PID, 0) == unix.ESRCH })
}

// The headless engine is built without cgo: neither Wails nor anything
// that needs GTK or WebKit is among its packages.
func TestEngineBinaryHasNoWindow(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "shepherd/backend/cli/cmd/shepherd-engine")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "shepherd/backend/cli\n") {
		t.Fatalf("the engine does not build on the CLI package:\n%s", out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/wailsapp/") || strings.HasPrefix(dep, "shepherd/app") || dep == "runtime/cgo" {
			t.Errorf("the engine depends on %s", dep)
		}
	}
}

// serve listens on a Unix socket or on TCP, never both.
func TestServeSocketWithListen(t *testing.T) {
	isolate(t)
	fails(t, 1, "not both", "serve", "--socket", "--listen", "127.0.0.1:0")
}
