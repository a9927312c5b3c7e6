// Package testutil holds the helpers the tests of several packages share:
// waiting for something to happen (never asserting how fast), a data folder
// of the test's own, waiting for processes to be gone, and git fixtures.
package testutil

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shepherd/backend/paths"
	"shepherd/backend/procid"
)

// Patience bounds every wait of a test for something that is to happen: far
// beyond what it takes on a loaded machine, so that a wait never asserts a
// speed (figures are the benchmarks'). A test that reaches it is hung.
const Patience = 30 * time.Second

// poll is how often a wait looks again.
const poll = 5 * time.Millisecond

// Eventually waits until cond holds, failing the test after Patience.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", Patience, what)
		}
		time.Sleep(poll)
	}
}

// Receive waits for a value on c, failing the test after Patience.
func Receive[T any](t testing.TB, what string, c <-chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(Patience):
		t.Fatalf("timed out after %s waiting for %s", Patience, what)
	}
	var zero T
	return zero
}

// Isolate gives the test Shepherd folders of its own (XDG_DATA_HOME,
// XDG_STATE_HOME, XDG_RUNTIME_DIR and XDG_CONFIG_HOME in a temporary folder)
// and returns them.
func Isolate(t testing.TB) paths.Paths {
	t.Helper()
	root := t.TempDir()
	for _, v := range []string{"XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME"} {
		t.Setenv(v, filepath.Join(root, strings.ToLower(strings.TrimPrefix(v, "XDG_"))))
	}
	return paths.Default()
}

// Alive reports whether a process with this pid is running (a zombie is
// gone: it has ended and only waits to be reaped).
func Alive(pid int) bool { return procid.Alive(pid) }

// WaitGone waits until every pid is gone, at most a few seconds in all: the
// shims of killed agents write their exit files as they end, which must be
// done before the test's folders are removed. It is cleanup, not an
// assertion: a process still there after the wait is left to its end.
func WaitGone(pids ...int) {
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(poll)
		}
	}
}
