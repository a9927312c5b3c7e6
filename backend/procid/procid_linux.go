package procid

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
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
