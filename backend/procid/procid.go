// Package procid tells whether a process is the one a record names. A pid
// alone is not an identity: the OS reuses pids, so a record keeps the pid,
// the OS start time of that pid and the identity of the boot it ran in, and
// a process counts as ours only when all three match. A zombie counts as
// gone: it answers kill(pid, 0) but will never run again.
package procid

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/shirou/gopsutil/v4/process"
)

// startToleranceMs absorbs the drift of the boot time the kernel reports
// (it is derived from the wall clock, which NTP may step) when a start time
// is read again in a later engine. A reused pid would also have to start
// within this window to be mistaken for ours.
const startToleranceMs = 1500

func init() {
	// The boot time behind every start time is read once per engine rather
	// than from /proc/stat for each process (the watchdog checks hundreds);
	// the tolerance above absorbs a different reading by a later engine.
	process.EnableBootTimeCache(true)
}

// Identity is what a record keeps of a process.
type Identity struct {
	PID       int
	StartTime int64 // ms since the epoch, as the OS reports it
	BootID    string
}

// StartTime returns the OS start time of pid in ms since the epoch.
func StartTime(pid int) (int64, error) { return gopsutilStartTime(pid) }

func gopsutilStartTime(pid int) (int64, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("invalid pid %d", pid)
	}
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return 0, err
	}
	return p.CreateTime()
}

// Alive reports whether pid exists and is not a zombie.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !isZombie(pid)
}

// Check is the outcome of comparing a live pid with a recorded identity.
type Check int

const (
	Gone     Check = iota // no such process (or a zombie)
	Same                  // alive and the same process
	Reused                // alive, but another process now has the pid
	NoRecord              // alive; the record has no start time to compare (old record)
)

func (c Check) String() string {
	return [...]string{"gone", "same", "reused", "no-start-time"}[c]
}

// Compare checks pid against the recorded start time (0 = none recorded).
func Compare(pid int, startTime int64) Check {
	if c, ok := compare(pid, startTime); ok {
		return c
	}
	if !Alive(pid) {
		return Gone
	}
	if startTime == 0 {
		return NoRecord
	}
	st, err := StartTime(pid)
	if err != nil {
		// It vanished between the two reads.
		if !Alive(pid) {
			return Gone
		}
		return Reused
	}
	return sameStart(st, startTime)
}

// sameStart: a process that started at st is the one recorded as started at
// recorded (within the tolerance), or another that reused its pid.
func sameStart(st, recorded int64) Check {
	d := st - recorded
	if d < 0 {
		d = -d
	}
	if d <= startToleranceMs {
		return Same
	}
	return Reused
}

// SignalGroup sends sig to the process group pgid. A group that is already
// gone is not an error.
func SignalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("refusing to signal process group %d", pgid)
	}
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// GroupExists reports whether group pgid has any member, zombies included.
// It is one system call; GroupAlive is the exact (and dearer) answer.
func GroupExists(pgid int) bool {
	if pgid <= 1 {
		return false
	}
	return !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// GroupAlive reports whether any process of group pgid is alive (zombies
// do not count).
func GroupAlive(pgid int) bool {
	return GroupExists(pgid) && groupHasLiveMember(pgid)
}

// WaitExit blocks until pid has exited (or is a zombie), or ctx ends.
func WaitExit(ctx context.Context, pid int) error {
	return waitExit(ctx, pid)
}

// pollExit is the fallback where no exit notification is available.
func pollExit(ctx context.Context, pid int) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for Alive(pid) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// Tracked is one process (pid + start time) checked again and again, as the
// watchdog does on every pass: where the system allows, the first check
// that finds the process keeps its /proc entry open, and every later check
// is one read of it (no path to look up, no file to open). An open entry
// stays bound to the process it was opened for: once that process is gone,
// reading it fails, even when its pid has been reused. Not safe for
// concurrent use; Close releases it.
type Tracked struct {
	pid   int
	start int64
	entry trackedEntry
}

// Track returns pid's check; nothing is opened before its first Compare.
func Track(pid int, startTime int64) *Tracked { return &Tracked{pid: pid, start: startTime} }

// Compare is Compare(pid, startTime), by the kept entry where there is one.
func (t *Tracked) Compare() Check {
	if c, ok := t.entry.compare(t.pid, t.start); ok {
		return c
	}
	return Compare(t.pid, t.start)
}

// Close releases what the check keeps open; it may be called more than once.
func (t *Tracked) Close() { t.entry.close() }
