package sandbox

import (
	"fmt"
	"strconv"
)

// Limits are what one box may use, so that it cannot exhaust what the user
// needs: its tasks (processes and threads), its memory, and the size of its
// /dev/shm (also its TMPDIR). 0: no limit of Shepherd's.
type Limits struct {
	Processes int
	MemoryMiB int
	ShmMiB    int
	// Cgroup: the engine started the box in a cgroup v2 of its own that
	// holds the process and memory limits (Support.Limits), so the box sets
	// no rlimits; else the box sets them itself.
	Cgroup bool
}

// Mechanisms of the limits (Support.Limits).
const (
	LimitsCgroup = "cgroup" // a delegated cgroup v2: pids.max and memory.max of the box's own cgroup
	LimitsRlimit = "rlimit" // rlimits set in the box, and the PID limit of its PID namespace
)

// DefaultShmMiB is a box's /dev/shm by default: room for what programs put
// in TMPDIR (test binaries, build scratch, package tarballs), far from the
// kernel's default of half the memory.
const DefaultShmMiB = 1024

// DefaultProcesses is a box's task limit by default: far above what a
// coding agent and its builds use (a few hundred), well below what hurts
// the host.
const DefaultProcesses = 4096

// DefaultMemoryMiB is a box's memory limit by default: half of this
// machine's memory (8 GiB where it cannot be read).
func DefaultMemoryMiB() int {
	if m := totalMemoryMiB(); m > 0 {
		return m / 2
	}
	return 8192
}

// PIDMaxSlack: the box's PID namespace limit is Processes plus this, as the
// kernel, once pid numbers wrap, hands out numbers from 300 up only.
const PIDMaxSlack = 300

// Args are the shim's flags for l.
func (l Limits) Args() []string {
	a := []string{"--max-processes", strconv.Itoa(l.Processes), "--memory-mib", strconv.Itoa(l.MemoryMiB),
		"--shm-mib", strconv.Itoa(l.ShmMiB)}
	if l.Cgroup {
		a = append(a, "--limits-cgroup")
	}
	return a
}

// Describe says l in words.
func (l Limits) Describe() string {
	n := func(v int, unit string) string {
		if v == 0 {
			return "no limit"
		}
		return strconv.Itoa(v) + unit
	}
	return fmt.Sprintf("processes %s, memory %s, /dev/shm %s", n(l.Processes, ""), n(l.MemoryMiB, " MiB"), n(l.ShmMiB, " MiB"))
}
