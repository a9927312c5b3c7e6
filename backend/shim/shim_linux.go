package shim

import (
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// becomeSubreaper makes the agent's orphaned descendants children of the
// shim rather than of PID 1, so they are reaped (and can be stopped) at once.
func becomeSubreaper() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

// closeInheritedOnExec keeps descriptors the shim inherited (from whatever
// started the engine) from leaking into the agent, which gets only stdin,
// stdout and stderr: every descriptor from 3 up is marked close-on-exec, in
// one call (Linux 5.11), else one by one.
func closeInheritedOnExec() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	closeListedOnExec()
}

// children lists the shim's live children (any thread may be their parent).
func children() []int {
	files, _ := filepath.Glob("/proc/self/task/*/children")
	var out []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(s); err == nil && !zombie(pid) {
				out = append(out, pid)
			}
		}
	}
	return out
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z'
}

// absorbFatalSignals keeps the signals whose Go default ends the process
// (after a crash dump) from ending a boxed agent's shim, PID 1 of its box,
// which processes in the box could otherwise send it where the kernel has
// no Landlock signal scoping. (The kernel already keeps SIGKILL and SIGSTOP
// from inside the box away from it.)
func absorbFatalSignals() {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGQUIT, syscall.SIGABRT, syscall.SIGILL, syscall.SIGTRAP, syscall.SIGSYS, syscall.SIGSTKFLT)
	go func() {
		for range ch {
		}
	}()
}
