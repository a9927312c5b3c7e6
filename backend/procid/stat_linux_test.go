package procid

import (
	"fmt"
	"os"
	"strings"
	"testing"

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
