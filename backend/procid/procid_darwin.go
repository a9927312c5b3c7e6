package procid

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/process"
	"golang.org/x/sys/unix"
)

// BootID on macOS is the kernel's boot time (kern.boottime, through
// gopsutil): macOS has no random boot id, but the boot time changes with
// every boot, which is all the identity needs.
func BootID() (string, error) {
	bt, err := host.BootTime()
	if err != nil {
		return "", err
	}
	return "boottime-" + strconv.FormatUint(bt, 10), nil
}

func isZombie(pid int) bool {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return false
	}
	st, err := p.Status()
	if err != nil {
		return false
	}
	for _, s := range st {
		if s == process.Zombie {
			return true
		}
	}
	return false
}

// groupHasLiveMember: macOS has no /proc to list a group's members; kill(-pgid, 0)
// already said the group exists, and orphans there are reaped by launchd at
// once, so the group is taken as alive.
func groupHasLiveMember(pgid int) bool { return true }

// waitExit uses kqueue's EVFILT_PROC/NOTE_EXIT, which works for any process.
func waitExit(ctx context.Context, pid int) error {
	kq, err := unix.Kqueue()
	if err != nil {
		return pollExit(ctx, pid)
	}
	defer unix.Close(kq)
	ev := unix.Kevent_t{Ident: uint64(pid), Filter: unix.EVFILT_PROC, Flags: unix.EV_ADD | unix.EV_ONESHOT, Fflags: unix.NOTE_EXIT}
	if _, err := unix.Kevent(kq, []unix.Kevent_t{ev}, nil, nil); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil
		}
		return pollExit(ctx, pid)
	}
	out := make([]unix.Kevent_t, 1)
	for {
		ts := unix.NsecToTimespec(int64(250 * time.Millisecond))
		n, err := unix.Kevent(kq, nil, out, &ts)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return pollExit(ctx, pid)
		}
		if n > 0 || isZombie(pid) {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// compare: macOS has no /proc; Compare takes the slow path.
func compare(int, int64) (Check, bool) { return 0, false }

// trackedEntry: macOS has no /proc; every check takes Compare's path.
type trackedEntry struct{}

func (*trackedEntry) compare(int, int64) (Check, bool) { return 0, false }
func (*trackedEntry) close()                           {}
