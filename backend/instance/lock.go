// Package instance makes sure one engine at a time owns a data folder. The
// lock is an flock on a file in that folder: the OS releases it when the
// holder dies, however it dies.
package instance

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ErrLocked is returned when another live engine holds the lock.
var ErrLocked = errors.New("another Shepherd engine is already running on this data folder")

// Lock is a held engine lock.
type Lock struct{ f *os.File }

// Acquire takes the lock at path without waiting for a live holder. When
// it is held elsewhere the error wraps ErrLocked and names the holder's
// pid. A holder that has just died can leave the lock held for a moment (a
// child it was starting still holds a copy of the descriptor until its exec
// closes it): then Acquire tries again, for up to two seconds.
func Acquire(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open engine lock %s: %w", path, err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		holder, _ := os.ReadFile(path)
		pid := strings.TrimSpace(string(holder))
		if errors.Is(err, unix.EWOULDBLOCK) && !holderAlive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			if pid == "" {
				pid = "unknown"
			}
			return nil, fmt.Errorf("%w (pid %s, lock %s)", ErrLocked, pid, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &Lock{f: f}, nil
}

// holderAlive reports whether the pid written in the lock file runs.
func holderAlive(pid string) bool {
	n, err := strconv.Atoi(pid)
	if err != nil || n <= 0 {
		return true // unknown: take it as alive, so a real holder is never raced
	}
	return unix.Kill(n, 0) == nil || errors.Is(unix.Kill(n, 0), unix.EPERM)
}

// Release gives the lock up.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
