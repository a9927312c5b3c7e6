package procid

import (
	"fmt"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

func TestTreeUsage(t *testing.T) {
	// A shell with a busy child and an idle grandchild.
	cmd := exec.Command("/bin/sh", "-c", `sh -c 'sleep 300' & (while :; do :; done) & wait`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, d := range Descendants(cmd.Process.Pid) {
			_ = exec.Command("kill", "-9", fmt.Sprint(d)).Run()
		}
		cmd.Process.Kill()
		cmd.Wait()
	}()
	deadline := time.Now().Add(5 * time.Second)
	for len(Descendants(cmd.Process.Pid)) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if d := Descendants(cmd.Process.Pid); len(d) < 3 {
		t.Fatalf("descendants %v", d)
	}
	u1, err := TreeUsage(cmd.Process.Pid)
	if err != nil || u1.Processes < 4 || u1.RSS <= 0 {
		t.Fatalf("usage %+v %v", u1, err)
	}
	time.Sleep(300 * time.Millisecond)
	u2, _ := TreeUsage(cmd.Process.Pid)
	if d := u2.CPU - u1.CPU; d < 100*time.Millisecond {
		t.Fatalf("a busy loop used %s of CPU in 300 ms", d)
	}
	if _, err := TreeUsage(999999); err == nil {
		t.Fatal("usage of a missing process")
	}
}

func TestParseProcStat(t *testing.T) {
	line := "42 (we)ird ) name) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 100 4096 300 18446744073709551615"
	st, ok := parseProcStat([]byte(line))
	if !ok || st.state != 'S' || st.cpu != 3*time.Second || st.rss != 300*pageSize || st.threads != 1 {
		t.Fatalf("%+v %v", st, ok)
	}
	for _, bad := range []string{"", "42 (x", "42 (x) S 1", "42 (x) S 1 2 3 4 5 6 7 8 9 10 x 12 13 14 15 16 17 18 19 20 21"} {
		if _, ok := parseProcStat([]byte(bad)); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzParseProcStat: no input makes parseProcStat panic, and on every input
// it agrees with the plain reading of the same fields (statFields and
// strconv) it replaced.
func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("42 (we)ird ) name) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 100 4096 300 18446744073709551615"))
	f.Add([]byte("7 (sh) Z 1 7 7 0 -1 0 0 0 0 0 18446744073709551615 1 0 0 20 0 x 0 1 2 -3 4\n"))
	f.Add([]byte("1 (a) R 0 0 0 0 0 0 0 0 0 0 01 2 0 0 0 0 12 0 0 0 99999999999999999999 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, ok := parseProcStat(b)
		for _, c := range b {
			if c >= 0x80 {
				return // strings.Fields also splits on Unicode spaces; /proc writes ASCII
			}
		}
		fields, fok := statFields(b)
		var want procStat
		if fok {
			ut, err1 := strconv.ParseUint(fields[11], 10, 64)
			stt, err2 := strconv.ParseUint(fields[12], 10, 64)
			rss, err3 := strconv.ParseInt(fields[21], 10, 64)
			fok = err1 == nil && err2 == nil && err3 == nil && rss >= 0
			want = procStat{state: fields[0][0], cpu: time.Duration(ut+stt) * time.Second / clockTicks, rss: rss * pageSize,
				zombied: fields[0][0] == 'Z' || fields[0][0] == 'X'}
		}
		if ok != fok {
			t.Fatalf("%q: ok %v, the plain reading %v", b, ok, fok)
		}
		if ok && (st.state != want.state || st.cpu != want.cpu || st.rss != want.rss || st.zombied != want.zombied) {
			t.Fatalf("%q: %+v, the plain reading %+v", b, st, want)
		}
	})
}

// TestChildrenOfOneThread: the children of a process of one thread are
// read from its own task, and match those of a reading of every task.
func TestChildrenOfOneThread(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 300 & sleep 300 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, d := range Descendants(cmd.Process.Pid) {
			_ = exec.Command("kill", "-9", fmt.Sprint(d)).Run()
		}
		cmd.Process.Kill()
		cmd.Wait()
	}()
	pid := cmd.Process.Pid
	for deadline := time.Now().Add(5 * time.Second); len(children(pid, 0)) < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	st, ok := readProcStat(pid)
	if !ok || st.threads != 1 {
		t.Fatalf("the shell's stat: %+v %v", st, ok)
	}
	one, all := children(pid, st.threads), children(pid, 0)
	if len(one) != 2 || fmt.Sprint(one) != fmt.Sprint(all) {
		t.Fatalf("children from its task %v, from every task %v", one, all)
	}
}
