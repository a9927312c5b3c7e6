package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"shepherd/backend/api"
	"shepherd/backend/instance"
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
	info, err := StartEngine(ctx, exe, p)
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
	again, err := StartEngine(ctx, exe, p)
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
	waitFor(t, "the event stream", func() bool { return seen("hello") })
	if out := ok(t, "quit"); !strings.Contains(out, "has quit") {
		t.Fatalf("quit: %q", out)
	}
	waitFor(t, "engine:quit to reach the client", func() bool { return seen(EventEngineQuit) })
	waitFor(t, "the engine to end", func() bool { return unix.Kill(info.PID, 0) == unix.ESRCH })
}

// An engine that cannot start says why, with what it wrote.
func TestStartEngineFails(t *testing.T) {
	p := isolate(t)
	bin := filepath.Join(t.TempDir(), "shepherd-engine")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho cannot open the data folder >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := StartEngine(ctx, bin, p)
	if !errors.Is(err, ErrEngineDidNotStart) || !strings.Contains(err.Error(), "cannot open the data folder") ||
		!strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("err = %v", err)
	}
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

// The engine is started without the window's own variables, and with the rest.
func TestEnvironWithout(t *testing.T) {
	t.Setenv("SHEPHERD_TEST_WINDOW_ONLY", "1")
	t.Setenv("SHEPHERD_TEST_KEPT", "a=b")
	env := environWithout([]string{"SHEPHERD_TEST_WINDOW_ONLY"})
	if slices.Contains(env, "SHEPHERD_TEST_WINDOW_ONLY=1") {
		t.Error("SHEPHERD_TEST_WINDOW_ONLY passed on")
	}
	if !slices.Contains(env, "SHEPHERD_TEST_KEPT=a=b") {
		t.Error("SHEPHERD_TEST_KEPT=a=b not passed on")
	}
	if len(env) != len(os.Environ())-1 {
		t.Errorf("%d variables, want %d", len(env), len(os.Environ())-1)
	}
}
