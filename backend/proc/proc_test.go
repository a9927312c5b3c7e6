package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"shepherd/backend/procid"
	"shepherd/backend/shim"
	"shepherd/internal/testutil"
)

var shimBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "proc-test-")
	if err != nil {
		panic(err)
	}
	shimBin = filepath.Join(dir, "shepherd-shim")
	if out, err := shim.BuildCommand(shimBin).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build shim: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func spec(t *testing.T, script string) Spec {
	dir := t.TempDir()
	return Spec{Path: "/bin/sh", Argv: []string{"sh", "-c", script}, Dir: dir, Env: os.Environ(),
		Log: filepath.Join(dir, "agent.log"), ExitFile: filepath.Join(dir, "exit.json"),
		RunFile: filepath.Join(dir, "run.json"), Grace: time.Second}
}

// A shim whose go-ahead never comes starts nothing and ends.
func TestAbortStartsNothing(t *testing.T) {
	r := &Runner{Shim: shimBin}
	s := spec(t, "echo ran")
	p, err := r.Prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	if p.ShimPID <= 0 || p.ShimStartTime == 0 {
		t.Fatalf("shim identity %d %d", p.ShimPID, p.ShimStartTime)
	}
	p.Abort()
	if procid.Alive(p.ShimPID) {
		t.Fatal("shim alive after Abort")
	}
	for _, f := range []string{s.RunFile, s.ExitFile} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Fatalf("%s written: %v", f, err)
		}
	}
	if b, _ := os.ReadFile(s.Log); len(b) != 0 {
		t.Fatalf("log: %q", b)
	}
}

// Go starts the agent; Wait reports its real exit code and closes Done.
func TestGoAndWait(t *testing.T) {
	r := &Runner{Shim: shimBin}
	s := spec(t, "echo hello; exit 3")
	pend, err := r.Prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pend.Go()
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Wait(context.Background())
	if err != nil || st == nil || st.ExitCode == nil || *st.ExitCode != 3 || st.PID != p.PID {
		t.Fatalf("wait: %+v %v", st, err)
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("Done not closed")
	}
	if p.Exit() != st {
		t.Fatal("Exit differs from Wait's answer")
	}
	p.Reap(context.Background())
	ri, err := shim.ReadRun(s.RunFile)
	if err != nil || ri == nil || ri.PID != p.PID || ri.ShimPID != pend.ShimPID {
		t.Fatalf("run file: %+v %v", ri, err)
	}
	if b, _ := os.ReadFile(s.Log); string(b) != "hello\n" {
		t.Fatalf("log %q", b)
	}
}

// A command the shim cannot exec is an error from Go, and nothing runs.
func TestGoReportsExecFailure(t *testing.T) {
	r := &Runner{Shim: shimBin}
	s := spec(t, "")
	s.Path = filepath.Join(s.Dir, "missing")
	pend, err := r.Prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pend.Go(); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("go: %v", err)
	}
}

// While the shim lives, the exit status it owes is waited for: the agent
// is gone, the file comes a moment later.
func TestAwaitExitWaitsWhileShimLives(t *testing.T) {
	dir := t.TempDir()
	exitFile := filepath.Join(dir, "exit.json")
	fakeShim := exec.Command("sleep", "300")
	if err := fakeShim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { fakeShim.Process.Kill(); fakeShim.Wait() }()
	st, _ := procid.StartTime(fakeShim.Process.Pid)
	id := Identity{PID: 999999, ShimPID: fakeShim.Process.Pid, ShimStartTime: st, ExitFile: exitFile}
	go func() {
		time.Sleep(150 * time.Millisecond) // the shim is slow to write
		os.WriteFile(exitFile, []byte(`{"pid":999999,"exitCode":7,"exitedAt":"2026-01-02T03:04:05Z"}`), 0o600)
	}()
	got := (&Runner{}).AwaitExit(context.Background(), id)
	if got == nil || got.ExitCode == nil || *got.ExitCode != 7 {
		t.Fatalf("await: %+v", got)
	}
}

// A shim that is gone owes nothing: no status, no wait.
func TestAwaitExitShimGone(t *testing.T) {
	id := Identity{PID: 999999, ShimPID: 999998, ExitFile: filepath.Join(t.TempDir(), "exit.json")}
	// On a clock that never moves, a wait for the status would never end.
	r := &Runner{Clock: clockwork.NewFakeClock()}
	got := make(chan *shim.ExitStatus, 1)
	go func() { got <- r.AwaitExit(context.Background(), id) }()
	if st := testutil.Receive(t, "the answer for a shim that is gone", got); st != nil {
		t.Fatalf("await: %+v", st)
	}
}

// Terminate waits its grace on the runner's clock, then kills.
func TestTerminateOnClock(t *testing.T) {
	clk := clockwork.NewFakeClock()
	r := &Runner{Shim: shimBin, Clock: clk}
	sp := spec(t, `trap "" TERM; echo ready; while :; do sleep 1; done`)
	pend, err := r.Prepare(sp)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pend.Go()
	if err != nil {
		t.Fatal(err)
	}
	go p.Wait(context.Background())
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if b, _ := os.ReadFile(sp.Log); strings.Contains(string(b), "ready") {
			break // its trap is set
		}
		if time.Now().After(deadline) {
			t.Fatal("agent never ready")
		}
	}
	type res struct{ killed, gone bool }
	done := make(chan res, 1)
	go func() {
		k, g := p.Terminate(context.Background(), []Step{{Signal: syscall.SIGTERM, Wait: 10 * time.Second}}, nil)
		done <- res{k, g}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := clk.BlockUntilContext(ctx, 1); err != nil { // the grace timer
		t.Fatal(err)
	}
	clk.Advance(10 * time.Second)
	select {
	case r := <-done:
		if !r.killed || !r.gone {
			t.Fatalf("terminate: %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("terminate did not end")
	}
	if st := p.Exit(); st == nil || st.Signal != "SIGKILL" {
		t.Fatalf("exit %+v", st)
	}
	// The shim writes exit.json after it has told of the end: let it finish
	// before the test's folder is removed.
	testutil.WaitGone(pend.ShimPID)
}

// A shim that started the agent but could not say so in time: the start
// fails, and the agent its run file names does not outlive it.
func TestHelloTimeoutEndsTheStartedAgent(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "slow-shim")
	script := `#!/bin/sh
run=""
while [ $# -gt 0 ]; do case "$1" in --run) run="$2"; shift 2;; --) shift; break;; *) shift;; esac; done
head -c1 <&4 >/dev/null
setsid sleep 300 </dev/null >/dev/null 2>&1 &
printf '{"pid":%d,"shimPid":%d,"startedAt":"2026-01-01T00:00:00Z"}' $! $$ > "$run"
sleep 300
`
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	old := HelloTimeout
	HelloTimeout = 300 * time.Millisecond
	t.Cleanup(func() { HelloTimeout = old })
	r := &Runner{Shim: fake}
	s := spec(t, "unused")
	p, err := r.Prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Go(); err == nil || !strings.Contains(err.Error(), "did not report the agent's pid") {
		t.Fatalf("Go: %v", err)
	}
	ri, err := shim.ReadRun(s.RunFile)
	if err != nil || ri == nil {
		t.Fatalf("run file: %v %v", ri, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for procid.Alive(ri.PID) {
		if time.Now().After(deadline) {
			syscall.Kill(-ri.PID, syscall.SIGKILL)
			t.Fatalf("the agent %d the shim started outlived the failed start", ri.PID)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The shim runs with its runtime's settings (one P, shim.RuntimeEnv) from
// its first instruction; the agent's environment is the spec's.
func TestShimRuntimeEnvIsNotTheAgents(t *testing.T) {
	r := &Runner{Shim: shimBin}
	s := spec(t, `echo "GOMAXPROCS=${GOMAXPROCS-unset}"`)
	var env []string
	for _, kv := range s.Env {
		if !strings.HasPrefix(kv, "GOMAXPROCS=") {
			env = append(env, kv)
		}
	}
	s.Env = env
	pend, err := r.Prepare(s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pend.ShimPID) + "/environ")
	if err != nil {
		pend.Abort()
		t.Fatal(err)
	}
	if !strings.Contains("\x00"+string(b), "\x00GOMAXPROCS=1\x00") {
		t.Errorf("the shim's environment has no GOMAXPROCS=1")
	}
	p, err := pend.Go()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.Reap(context.Background())
	if b, _ := os.ReadFile(s.Log); string(b) != "GOMAXPROCS=unset\n" {
		t.Fatalf("the agent's log: %q", b)
	}
}

// A status line longer than the pipe's buffer (a box's error can name
// many paths) is read whole.
func TestLongStatusLineIsReadWhole(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "wordy-shim")
	why := strings.Repeat("the box could not be built ", 40)
	script := "#!/bin/sh\nhead -c1 <&4 >/dev/null\nprintf '{\"error\":\"%s\"}\\n' '" + why + "' >&3\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &Runner{Shim: fake}
	p, err := r.Prepare(spec(t, "unused"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Go(); err == nil || err.Error() != why || len(why) <= statusBuf {
		t.Fatalf("Go: %v", err)
	}
}
