package procid

import (
	"context"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// start runs a command in a group of its own; the returned wait may be
// called from any goroutine, any number of times.
func start(t *testing.T, name string, args ...string) (*exec.Cmd, func() error) {
	t.Helper()
	c := exec.Command(name, args...)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	wait := sync.OnceValue(c.Wait)
	t.Cleanup(func() { syscall.Kill(-c.Process.Pid, syscall.SIGKILL); wait() })
	return c, wait
}

func TestIdentity(t *testing.T) {
	c, _ := start(t, "sleep", "300")
	pid := c.Process.Pid
	st, err := StartTime(pid)
	if err != nil || st <= 0 {
		t.Fatalf("StartTime: %d %v", st, err)
	}
	if d := time.Since(time.UnixMilli(st)); d < -2*time.Second || d > 10*time.Second {
		t.Fatalf("start time %v is not about now", time.UnixMilli(st))
	}
	if got := Compare(pid, st); got != Same {
		t.Fatalf("same process: %s", got)
	}
	if got := Compare(pid, st-60_000); got != Reused {
		t.Fatalf("start time a minute off: %s", got)
	}
	if got := Compare(pid, 0); got != NoRecord {
		t.Fatalf("no start time: %s", got)
	}
	if id, err := BootID(); err != nil || len(id) < 8 {
		t.Fatalf("BootID %q %v", id, err)
	}
}

// A zombie still answers kill(pid, 0) but is gone for us.
func TestZombieIsGone(t *testing.T) {
	c := exec.Command("true")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pid := c.Process.Pid
	// Not reaped yet: a zombie once it has exited.
	deadline := time.Now().Add(3 * time.Second)
	for !isZombie(pid) {
		if time.Now().After(deadline) {
			t.Fatal("never became a zombie")
		}
		time.Sleep(time.Millisecond)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("kill(zombie, 0) = %v; the test assumes it succeeds", err)
	}
	if Alive(pid) || Compare(pid, 1) != Gone {
		t.Fatal("a zombie counted as alive")
	}
	c.Wait()
}

func TestWaitExitAndGroups(t *testing.T) {
	c, wait := start(t, "sh", "-c", "sleep 300 & sleep 0.2")
	pid := c.Process.Pid
	if !GroupAlive(pid) || !GroupExists(pid) {
		t.Fatal("group not alive")
	}
	go wait()
	t0 := time.Now()
	if err := WaitExit(context.Background(), pid); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d < 100*time.Millisecond {
		t.Fatalf("WaitExit returned after %s, before the exit", d)
	}
	// The background sleep keeps the group alive after its leader ended.
	if !GroupAlive(pid) {
		t.Fatal("group with a live member reported dead")
	}
	if err := SignalGroup(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for GroupAlive(pid) {
		if time.Now().After(deadline) {
			t.Fatal("group survived SIGKILL")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := SignalGroup(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("signalling a gone group: %v", err)
	}
	if err := SignalGroup(1, syscall.SIGTERM); err == nil {
		t.Fatal("signalling group 1 allowed")
	}
}

func TestWaitExitCancel(t *testing.T) {
	c, _ := start(t, "sleep", "300")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := WaitExit(ctx, c.Process.Pid); err == nil {
		t.Fatal("WaitExit of a live process returned nil")
	}
}
