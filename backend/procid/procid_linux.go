package procid

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

const bootIDFile = "/proc/sys/kernel/random/boot_id"

// BootID is the kernel's random id of this boot.
func BootID() (string, error) {
	b, err := os.ReadFile(bootIDFile)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// stat returns the state letter and the process group of pid from
// /proc/<pid>/stat.
func stat(pid int) (state byte, pgrp int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	return parseStat(b)
}

// parseStat reads the state letter and the process group from the contents
// of /proc/<pid>/stat. The command name may hold spaces and parentheses, so
// the fields are read after its last ')'.
func parseStat(b []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 3 {
		return 0, 0, false
	}
	pg, err := strconv.Atoi(f[2])
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], pg, true
}

func isZombie(pid int) bool {
	st, _, ok := stat(pid)
	return ok && (st == 'Z' || st == 'X')
}

func groupHasLiveMember(pgid int) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true // cannot tell: assume alive, the caller will escalate
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, pg, ok := stat(pid); ok && pg == pgid && st != 'Z' && st != 'X' {
			return true
		}
	}
	return false
}

// waitExit uses a pidfd: it becomes readable when the process exits, whether
// or not the process is our child. The pidfd is handed to Go's network
// poller, so a waiting agent costs no thread and no CPU until it exits.
func waitExit(ctx context.Context, pid int) error {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil
		}
		return pollExit(ctx, pid)
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return pollExit(ctx, pid)
	}
	stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Now()) })
	defer stop()
	var perr error
	err = rc.Read(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		if err != nil && !errors.Is(err, unix.EINTR) {
			perr = err
			return true
		}
		return n > 0
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return pollExit(ctx, pid)
	}
	if perr != nil {
		return pollExit(ctx, pid)
	}
	return nil
}

// compare is Compare from one read of /proc/<pid>/stat (its state and its
// start time), where gopsutil reads it twice and opens a pidfd: the
// watchdog compares every running agent on each pass, and that was most of
// an idle engine's work. ok=false: ask the slow path.
func compare(pid int, startTime int64) (c Check, ok bool) {
	if pid <= 0 {
		return Gone, true
	}
	// Plain system calls into a buffer on the stack: os.ReadFile's file
	// registers with the poller, and allocates.
	var buf [1024]byte
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT || err == unix.ESRCH {
		return Gone, true
	}
	if err != nil {
		return 0, false
	}
	n, err := unix.Read(fd, buf[:])
	unix.Close(fd)
	if err == unix.ESRCH {
		return Gone, true
	}
	if err != nil || n <= 0 || n == len(buf) {
		return 0, false
	}
	return checkStat(buf[:n], startTime)
}

// checkStat is compare's verdict on one read of /proc/<pid>/stat.
func checkStat(b []byte, startTime int64) (Check, bool) {
	state, ticks, fok := stateAndStart(b)
	if !fok {
		return 0, false
	}
	if state == 'Z' || state == 'X' {
		return Gone, true
	}
	if startTime == 0 {
		return NoRecord, true
	}
	boot, bok := bootMillis()
	if !bok {
		return 0, false
	}
	return sameStart(startMillis(ticks, boot), startTime), true
}

// stateAndStart reads the state letter (field 3) and the start time in
// ticks since boot (field 22) of /proc/<pid>/stat, after the command name's
// last ')', without allocating.
func stateAndStart(b []byte) (state byte, ticks uint64, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	field := 2 // the command name was field 2
	for j := i + 1; j < len(b); {
		for j < len(b) && b[j] == ' ' {
			j++
		}
		k := j
		for k < len(b) && b[k] != ' ' && b[k] != '\n' {
			k++
		}
		if k == j {
			break
		}
		field++
		switch field {
		case 3:
			if k-j != 1 {
				return 0, 0, false
			}
			state = b[j]
		case 22:
			t, err := strconv.ParseUint(string(b[j:k]), 10, 64)
			return state, t, err == nil
		}
		j = k
	}
	return 0, 0, false
}

// startMillis is a start time as gopsutil computes it (CreateTime): the
// ticks since boot in ms, plus the boot time in ms.
func startMillis(ticks, bootMs uint64) int64 { return int64(ticks*1000/clockTicks + bootMs) }

var bootOnce struct {
	sync.Once
	ms uint64
	ok bool
}

// bootMillis is the boot time (in ms) that gopsutil adds to every start
// time, found once: this process's start time from gopsutil, less its ticks
// since boot. So the start times compare read are exactly those StartTime
// returns, and those in records.
func bootMillis() (uint64, bool) {
	bootOnce.Do(func() {
		st, err := gopsutilStartTime(os.Getpid())
		if err != nil {
			return
		}
		b, err := os.ReadFile("/proc/self/stat")
		if err != nil {
			return
		}
		f, ok := statFields(b)
		if !ok || len(f) < 20 {
			return
		}
		ticks, err := strconv.ParseUint(f[19], 10, 64)
		if err != nil || uint64(st) < ticks*1000/clockTicks {
			return
		}
		bootOnce.ms, bootOnce.ok = uint64(st)-ticks*1000/clockTicks, true
	})
	return bootOnce.ms, bootOnce.ok
}

// trackedEntry is a Tracked's open /proc/<pid>/stat: kept once a read of it
// found the tracked process alive (and, with a recorded start time, the same
// one), so the process it names is the tracked one for as long as it lives.
type trackedEntry struct {
	fd   int
	open bool
}

func (e *trackedEntry) compare(pid int, startTime int64) (Check, bool) {
	if pid <= 0 {
		return Gone, true
	}
	if !e.open {
		fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == unix.ENOENT || err == unix.ESRCH {
			return Gone, true
		}
		if err != nil {
			return 0, false
		}
		e.fd, e.open = fd, true
	}
	var buf [1024]byte
	n, err := unix.Pread(e.fd, buf[:], 0)
	if err == unix.ESRCH {
		e.close()
		return Gone, true
	}
	if err != nil || n <= 0 || n == len(buf) {
		e.close()
		return 0, false
	}
	c, ok := checkStat(buf[:n], startTime)
	if !ok || c == Gone || c == Reused {
		e.close() // not the tracked process (or not readable): nothing to keep
	}
	return c, ok
}

func (e *trackedEntry) close() {
	if e.open {
		unix.Close(e.fd)
		e.open = false
	}
}
