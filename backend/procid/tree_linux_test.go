package procid

import (
	"fmt"
	"os/exec"
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
	if !ok || st.state != 'S' || st.cpu != 3*time.Second || st.rss != 300*pageSize {
		t.Fatalf("%+v %v", st, ok)
	}
	for _, bad := range []string{"", "42 (x", "42 (x) S 1", "42 (x) S 1 2 3 4 5 6 7 8 9 10 x 12 13 14 15 16 17 18 19 20 21"} {
		if _, ok := parseProcStat([]byte(bad)); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}
