package procid

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// statStates are the state letters of proc(5).
const statStates = "RSDZTtWXxKPI"

// The fields after pgrp, as a real /proc/<pid>/stat has them (from session
// to exit_code).
const statTail = " 4242 34816 4242 4194560 1185 0 0 0 3 1 0 0 20 0 1 0 2377418 5378048 230" +
	" 18446744073709551615 94066515222528 94066515242065 140726935516624 0 0 0 0 0 0 0 0 0 17 1" +
	" 0 0 0 0 0 94066515256016 94066515257376 94066547720192 140726935519573 140726935519597" +
	" 140726935519597 140726935523307 0\n"

// FuzzParseStat: no input makes parseStat panic, and whatever the command
// name holds — spaces, ')', "(x) R 1 2", newlines, invalid UTF-8 — the
// state and process group read are the ones the kernel wrote after it.
// Seeds are in testdata/fuzz/FuzzParseStat.
func FuzzParseStat(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw []byte, comm string, state byte, pid, ppid, pgrp int) {
		if st, _, ok := parseStat(raw); ok && (st == ' ' || st == '\t' || st == '\n') {
			t.Fatalf("state %q read from %q", st, raw)
		}

		// The kernel writes a letter; any other byte is mapped onto one.
		if !(state >= 'A' && state <= 'Z' || state >= 'a' && state <= 'z') {
			state = statStates[int(state)%len(statStates)]
		}
		b := fmt.Appendf(nil, "%d (%s) %c %d %d%s", pid, comm, state, ppid, pgrp, statTail)
		st, pg, ok := parseStat(b)
		if !ok || st != state || pg != pgrp {
			t.Fatalf("parseStat(%q) = %q, %d, %v; want %q, %d", b, st, pg, ok, state, pgrp)
		}
	})
}

// The parser agrees with the kernel about this process.
func TestParseStatSelf(t *testing.T) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	// The state is the main thread's, which may be running or asleep while
	// another thread reads the file: any live state will do.
	st, pg, ok := parseStat(b)
	if !ok || !strings.ContainsRune("RSD", rune(st)) || pg != unix.Getpgrp() {
		t.Fatalf("parseStat(%q) = %q, %d, %v; want a live state and %d", b, st, pg, ok, unix.Getpgrp())
	}
}

// The one-read comparison sees the start time gopsutil reports, to the
// millisecond (records hold gopsutil's), for this process and a child; it
// answers itself for a live process, a dead one and a missing record.
func TestCompareFromOneRead(t *testing.T) {
	c, wait := start(t, "sleep", "300")
	for _, pid := range []int{os.Getpid(), c.Process.Pid} {
		want, err := gopsutilStartTime(pid)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		_, ticks, ok := stateAndStart(b)
		boot, bok := bootMillis()
		if !ok || !bok || startMillis(ticks, boot) != want {
			t.Fatalf("pid %d: start %d (ticks %d, boot %d, %v %v); gopsutil says %d", pid, startMillis(ticks, boot), ticks, boot, ok, bok, want)
		}
		for _, tc := range []struct {
			start int64
			want  Check
		}{{want, Same}, {want + 60_000, Reused}, {0, NoRecord}} {
			if got, ok := compare(pid, tc.start); !ok || got != tc.want {
				t.Fatalf("compare(%d, %d) = %s, %v; want %s", pid, tc.start, got, ok, tc.want)
			}
		}
	}
	pid := c.Process.Pid
	syscall.Kill(pid, syscall.SIGKILL)
	wait()
	if got, ok := compare(pid, 1); !ok || got != Gone {
		t.Fatalf("a reaped process: %s, %v", got, ok)
	}
}

// FuzzStateAndStart: no input makes it panic, and whatever the command name
// holds, the state and start time read are the kernel's.
func FuzzStateAndStart(f *testing.F) {
	f.Add([]byte("1 (x) S 0"), "a) b (c", byte('S'), uint64(2377418))
	f.Fuzz(func(t *testing.T, raw []byte, comm string, state byte, ticks uint64) {
		stateAndStart(raw)
		if !(state >= 'A' && state <= 'Z' || state >= 'a' && state <= 'z') {
			state = statStates[int(state)%len(statStates)]
		}
		b := fmt.Appendf(nil, "42 (%s) %c 1 42 42 0 -1 4194560 1185 0 0 0 3 1 0 0 20 0 1 0 %d 5378048 230 0\n", comm, state, ticks)
		st, tk, ok := stateAndStart(b)
		if !ok || st != state || tk != ticks {
			t.Fatalf("stateAndStart(%q) = %q, %d, %v; want %q, %d", b, st, tk, ok, state, ticks)
		}
	})
}

// TestTracked: a tracked process is found the same while it lives — from
// its kept /proc entry after the first check — and gone once it is a zombie
// and once it is reaped; a wrong start time is a reused pid, and nothing is
// kept for it.
func TestTracked(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	st, err := StartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	tr := Track(pid, st)
	defer tr.Close()
	for i := 0; i < 2; i++ {
		if c := tr.Compare(); c != Same || !tr.entry.open {
			t.Fatalf("check %d of a live process: %v (entry kept: %v)", i, c, tr.entry.open)
		}
	}
	if c := Track(pid, 0).Compare(); c != NoRecord {
		t.Fatalf("without a start time: %v", c)
	}
	wrong := Track(pid, st-60_000)
	if c := wrong.Compare(); c != Reused || wrong.entry.open {
		t.Fatalf("with another start time: %v (entry kept: %v)", c, wrong.entry.open)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	for deadline := time.Now().Add(5 * time.Second); !isZombie(pid) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if c := tr.Compare(); c != Gone {
		t.Fatalf("a zombie: %v", c)
	}
	tr2 := Track(pid, st)
	if c := tr2.Compare(); c != Gone {
		t.Fatalf("a zombie, first check: %v", c)
	}
	_ = cmd.Wait() // reaped
	if c := tr.Compare(); c != Gone {
		t.Fatalf("reaped: %v", c)
	}
	if tr.entry.open {
		t.Fatal("the entry of a reaped process is kept")
	}
}

// TestTrackedEntryOfReaped: an entry opened while the process lived reads
// as gone once it is reaped (it never describes a later process).
func TestTrackedEntryOfReaped(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	st, err := StartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	tr := Track(pid, st)
	defer tr.Close()
	if c := tr.Compare(); c != Same || !tr.entry.open {
		t.Fatalf("a live process: %v (entry kept: %v)", c, tr.entry.open)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	var buf [1024]byte
	if _, err := unix.Pread(tr.entry.fd, buf[:], 0); err != unix.ESRCH {
		t.Fatalf("reading the entry of a reaped process: %v, want ESRCH", err)
	}
	if c := tr.Compare(); c != Gone {
		t.Fatalf("reaped: %v", c)
	}
}
