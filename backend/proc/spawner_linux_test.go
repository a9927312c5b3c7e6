package proc

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"shepherd/backend/procid"
	"shepherd/backend/sandbox"
)

// ppid is a process's parent pid.
func ppid(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+2:])
	n, _ := strconv.Atoi(f[1])
	return n
}

// A sandboxed shim is started by the spawner yet is this process's child;
// a spawner that has gone is started again; Close ends it.
func TestSpawnerStartsBoxedShimsAsOurChildren(t *testing.T) {
	r := &Runner{Shim: shimBin}
	defer r.Close()
	boxed := func(script string) Spec {
		s := spec(t, script)
		s.Sandbox = filepath.Join(s.Dir, "sandbox.json")
		if err := sandbox.Save(s.Sandbox, sandbox.Grants{}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	run := func(s Spec) {
		t.Helper()
		pend, err := r.Prepare(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := ppid(t, pend.ShimPID); got != os.Getpid() {
			t.Fatalf("the boxed shim's parent is %d, not this process (%d)", got, os.Getpid())
		}
		p, err := pend.Go()
		if err != nil {
			if strings.Contains(err.Error(), "SandboxUnavailable") {
				t.Skipf("no sandbox here: %v", err)
			}
			t.Fatal(err)
		}
		st, err := p.Wait(context.Background())
		if err != nil || st == nil || st.ExitCode == nil || *st.ExitCode != 3 || st.PID != p.PID {
			t.Fatalf("wait: %+v %v", st, err)
		}
		p.Reap(context.Background())
		if procid.Alive(pend.ShimPID) {
			t.Fatal("the shim was not reaped")
		}
		if b, _ := os.ReadFile(s.Log); string(b) != "boxed\n" {
			t.Fatalf("log %q", b)
		}
	}
	run(boxed("echo boxed; exit 3"))
	first := r.spawn.cmd.Process.Pid
	_ = r.spawn.cmd.Process.Kill()
	_, _ = r.spawn.cmd.Process.Wait()
	run(boxed("echo boxed; exit 3"))
	if r.spawn.cmd.Process.Pid == first {
		t.Fatal("the spawner was not started again")
	}
	second := r.spawn.cmd.Process.Pid
	r.Close()
	if procid.Alive(second) {
		t.Fatal("the spawner outlived Close")
	}
}
