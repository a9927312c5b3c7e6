package jail

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"shepherd/backend/sandbox"
)

// applyLimits sets l on the box where the engine did not start it in a
// cgroup of its own: the kernel's PID limit of the box's PID namespace
// (Linux 6.14 and newer: every task of the box counts, root's too), and
// rlimits, which the agent inherits and cannot raise: RLIMIT_NPROC (the
// tasks of the user in the box's user namespace, Linux 5.14 and newer; the
// kernel exempts root) and RLIMIT_DATA (each process's private writable
// memory — what it uses, unlike RLIMIT_AS, which counts the address space
// that Node, Go and WebAssembly reserve without using it). Rlimits are the
// shim's too: the box's supervisor counts among its tasks.
func applyLimits(l sandbox.Limits) error {
	if l.Cgroup {
		return nil
	}
	if l.Processes > 0 {
		_ = SetPIDLimit(l.Processes + sandbox.PIDMaxSlack) // older kernels: RLIMIT_NPROC alone
		if kernelAtLeast(5, 14) {
			n := uint64(l.Processes)
			if err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: n, Max: n}); err != nil {
				return fmt.Errorf("limit the box's processes: %w", err)
			}
		}
	}
	if l.MemoryMiB > 0 {
		n := uint64(l.MemoryMiB) << 20
		if err := unix.Setrlimit(unix.RLIMIT_DATA, &unix.Rlimit{Cur: n, Max: n}); err != nil {
			return fmt.Errorf("limit the box's memory: %w", err)
		}
	}
	return nil
}

// SetPIDLimit sets the highest pid of the calling thread's PID namespace
// (which must be the box's) to n-1: the kernel then runs at most n-1 tasks
// in it. It fails on kernels before 6.14, where pid_max is the host's.
func SetPIDLimit(n int) error {
	return os.WriteFile("/proc/sys/kernel/pid_max", []byte(strconv.Itoa(n)), 0)
}

// PIDLimitWorks says whether the kernel takes a PID limit for the box's
// PID namespace (writing back the one it has).
func PIDLimitWorks() bool {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && SetPIDLimit(n) == nil
}

func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	rel := unix.ByteSliceToString(u.Release[:])
	parts := strings.SplitN(rel, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, _ := strconv.Atoi(parts[0])
	mi, _ := strconv.Atoi(strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	return ma > major || ma == major && mi >= minor
}
