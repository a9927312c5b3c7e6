package procid

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"

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
// /proc/<pid>/stat (the command name may hold spaces and parentheses, so the
// fields are read after its last ')').
func stat(pid int) (state byte, pgrp int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
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

// waitExit uses a pidfd: it becomes readable when the process exits, with no
// polling, whether or not the process is our child.
func waitExit(ctx context.Context, pid int) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil
		}
		return pollExit(ctx, pid)
	}
	defer unix.Close(fd)
	for {
		if isZombie(pid) {
			return nil
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		// A bounded wait so a cancelled ctx is noticed; the exit itself
		// wakes poll at once.
		n, err := unix.Poll(fds, 250)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return pollExit(ctx, pid)
		}
		if n > 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
