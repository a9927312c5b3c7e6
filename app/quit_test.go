package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"shepherd/backend/cli"
	"shepherd/backend/engine"
	"shepherd/internal/testutil"
)

// quitProbe is an App whose Wails calls and os.Exit are counted.
type quitProbe struct {
	a                *App
	hidden, quits    atomic.Int32
	exited, exitCode atomic.Int32
}

func newQuitProbe(t *testing.T) *quitProbe {
	t.Helper()
	p := &quitProbe{a: New("test")}
	p.exitCode.Store(-1)
	p.a.hideFn = func(context.Context) { p.hidden.Add(1) }
	p.a.quitFn = func(ctx context.Context) {
		p.quits.Add(1)
		// What Wails' runtime.Quit does: it asks the before-close hook,
		// and ends the main loop unless the hook prevents it.
		if !OnBeforeClose(p.a)(ctx) {
			OnShutdown(p.a)(ctx)
		}
	}
	p.a.exitFn = func(code int) { p.exitCode.Store(int32(code)); p.exited.Add(1) }
	p.a.mu.Lock()
	p.a.ctx = context.Background()
	p.a.mu.Unlock()
	return p
}

// The close button hides the window and keeps the app; Quit (the menu,
// Ctrl/Cmd+Q) is not turned into a hide, although Wails asks the same hook.
func TestCloseHidesQuitQuits(t *testing.T) {
	p := newQuitProbe(t)
	if !OnBeforeClose(p.a)(context.Background()) || p.hidden.Load() != 1 {
		t.Fatalf("the close button: hidden %d times; want the close prevented and the window hidden once", p.hidden.Load())
	}
	p.a.Quit()
	if p.quits.Load() != 1 || p.hidden.Load() != 1 || !p.a.shuttingDown.Load() {
		t.Fatalf("Quit: quits=%d hidden=%d shutdown=%v; want the window to quit, not hide",
			p.quits.Load(), p.hidden.Load(), p.a.shuttingDown.Load())
	}
	if OnBeforeClose(p.a)(context.Background()) {
		t.Fatal("a close during the quit was prevented")
	}
}

// A quit asked for before the window is up (a signal during start-up) ends
// the app as soon as Wails gives it its context, without starting an engine.
func TestQuitBeforeStartup(t *testing.T) {
	isolate(t)
	p := newQuitProbe(t)
	p.a.mu.Lock()
	p.a.ctx = nil
	p.a.mu.Unlock()
	p.a.quit()
	if p.quits.Load() != 0 {
		t.Fatal("quit reached Wails before it had started")
	}
	OnStartup(p.a)(context.Background())
	if p.quits.Load() != 1 {
		t.Fatal("start-up did not carry out the quit asked for before it")
	}
	if st := p.a.status(); st.State != EngineNone {
		t.Fatalf("an engine was started by a window that was quitting: %+v", st)
	}
}

// SIGINT, SIGTERM and SIGHUP quit as the menu does; a second signal ends
// the process at once. Real signals to this test process.
func TestSignalsQuit(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			p := newQuitProbe(t)
			p.a.quitFn = func(context.Context) { p.quits.Add(1) } // a main loop that does not end
			ch := make(chan os.Signal, 2)
			signal.Notify(ch, sig)
			defer signal.Stop(ch)
			go p.a.onSignals(ch)
			if err := syscall.Kill(os.Getpid(), sig); err != nil {
				t.Fatal(err)
			}
			testutil.Eventually(t, "the signal to quit the app", func() bool { return p.quits.Load() == 1 })
			if !p.a.quitting.Load() {
				t.Fatal("the app is not marked as quitting: the close would be turned into a hide")
			}
			if err := syscall.Kill(os.Getpid(), sig); err != nil {
				t.Fatal(err)
			}
			testutil.Eventually(t, "a second signal to end the process", func() bool { return p.exited.Load() == 1 })
			if p.exitCode.Load() != 1 {
				t.Fatalf("exit code %d after a second signal, want 1", p.exitCode.Load())
			}
		})
	}
}

// A quit that does not reach OnShutdown in time (the main loop hung) ends
// the process anyway, within quitDeadline.
func TestQuitDeadline(t *testing.T) {
	p := newQuitProbe(t)
	p.a.quitFn = func(context.Context) { p.quits.Add(1) }
	start := time.Now()
	p.a.Quit()
	testutil.Eventually(t, "the process to be ended", func() bool { return p.exited.Load() == 1 })
	if d := time.Since(start); d < quitDeadline {
		t.Fatalf("ended after %v, before the deadline %v", d, quitDeadline)
	}
}

// buildEngine builds the headless engine (without cgo) once per test run.
func buildEngine(t *testing.T) string {
	t.Helper()
	engineOnce.Do(func() {
		dir, err := os.MkdirTemp("", "shepherd-app-engine")
		if err != nil {
			engineOnce.err = err
			return
		}
		engineOnce.path = filepath.Join(dir, "shepherd-engine")
		cmd := exec.Command("go", "build", "-o", engineOnce.path, "shepherd/backend/cli/cmd/shepherd-engine")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			engineOnce.err = fmt.Errorf("build the engine: %v\n%s", err, out)
		}
	})
	if engineOnce.err != nil {
		t.Fatal(engineOnce.err)
	}
	return engineOnce.path
}

var engineOnce struct {
	sync.Once
	path string
	err  error
}

// The window starts the headless engine when none runs and is only its
// client; its Quit asks that engine to quit too. `shepherd quit` closes
// every window attached to the engine.
func TestWindowStartsEngineAndQuitsTogether(t *testing.T) {
	isolate(t)
	needShim(t)
	t.Setenv(engine.EngineEnv, buildEngine(t))

	p := newQuitProbe(t)
	p.a.emitFn = (&emitted{}).emit
	OnStartup(p.a)(context.Background())
	st, err := p.a.Engine()
	if err != nil || st.State != EngineAttached || st.PID == os.Getpid() || st.PID == 0 {
		t.Fatalf("Engine() = %+v, %v; want attached to an engine of its own process", st, err)
	}
	engine := st.PID
	t.Cleanup(func() { _ = syscall.Kill(engine, syscall.SIGKILL) })
	addProject(t, p.a, t.TempDir(), "p")

	// A second window finds that engine; `shepherd quit` closes it.
	q := newQuitProbe(t)
	q.a.emitFn = (&emitted{}).emit
	OnStartup(q.a)(context.Background())
	if st, _ := q.a.Engine(); st.PID != engine {
		t.Fatalf("the second window: %+v; want attached to pid %d", st, engine)
	}
	q.a.quitFn = func(context.Context) { q.quits.Add(1) }
	// Both windows hear the engine (a window whose stream is not yet open
	// when the engine quits sees it go away instead).
	testutil.Eventually(t, "both windows following the engine's events", func() bool { return p.a.following.Load() && q.a.following.Load() })
	if code := cli.Main(context.Background(), []string{"quit"}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("shepherd quit: exit %d", code)
	}
	testutil.Eventually(t, "both windows to quit with the engine", func() bool { return q.quits.Load() == 1 && p.quits.Load() == 1 })
	testutil.Eventually(t, "the engine to end", func() bool { return syscall.Kill(engine, 0) == syscall.ESRCH })

	// A new window starts another engine; its Quit ends both.
	r := newQuitProbe(t)
	r.a.emitFn = (&emitted{}).emit
	OnStartup(r.a)(context.Background())
	st, _ = r.a.Engine()
	engine = st.PID
	if st.State != EngineAttached || engine == os.Getpid() {
		t.Fatalf("a new window: %+v", st)
	}
	r.a.Quit()
	if r.quits.Load() != 1 || !r.a.shuttingDown.Load() {
		t.Fatal("the window did not quit")
	}
	testutil.Eventually(t, "the engine to quit with the window", func() bool { return syscall.Kill(engine, 0) == syscall.ESRCH })
}
