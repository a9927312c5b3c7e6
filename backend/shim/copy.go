package shim

import (
	"errors"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"shepherd/backend/logrotate"
)

// The agent writes its stdout and stderr into a pipe, never into its log:
// the shim copies the pipe into agent.log, which it rotates at its cap
// (package logrotate), so that no agent can fill the disk through its
// output. When the disk is full anyway the copy goes on draining the pipe
// (the agent never blocks on a full disk) and drops what it cannot write,
// counted, with a line saying so when it can write again.
//
// The copy is one goroutine and one buffer: a shim is paid for per agent.
// The buffer is on the heap, made once: in the goroutine's frame it would
// be zeroed when the goroutine starts, and its stack grown to hold it —
// 64 KiB resident in every shim, whether its agent writes or not. From a
// fresh span of the heap, a page of it is resident once a read has filled
// it.

// copyBuf is the copy's buffer (a pipe holds 64 KiB by default; an agent's
// lines are mostly far shorter).
const copyBuf = 16 << 10

// copier copies the agent's pipe into its log.
type copier struct {
	r   *os.File
	w   *logrotate.Writer
	buf []byte

	mu      sync.Mutex
	waiters []chan struct{} // flushes asked for, not yet done
	done    chan struct{}   // closed at the pipe's end (every writer gone)
}

func startCopy(r *os.File, w *logrotate.Writer) *copier {
	c := &copier{r: r, w: w, buf: make([]byte, copyBuf), done: make(chan struct{})}
	go c.loop()
	return c
}

func (c *copier) loop() {
	defer func() {
		c.mu.Lock()
		for _, ch := range c.waiters {
			close(ch)
		}
		c.waiters = nil
		c.mu.Unlock()
		close(c.done)
	}()
	buf := c.buf
	for {
		n, err := c.r.Read(buf)
		if n > 0 {
			_, _ = c.w.Write(buf[:n]) // what the disk refuses is counted by w
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			c.flushed(buf)
			continue
		}
		if err != nil {
			return
		}
	}
}

// flushed answers the flushes asked for: what the pipe holds now is read
// (without waiting for more) and written, then they are told.
func (c *copier) flushed(buf []byte) {
	_ = c.r.SetReadDeadline(time.Time{})
	c.mu.Lock()
	ws := c.waiters
	c.waiters = nil
	c.mu.Unlock()
	if rc, err := c.r.SyscallConn(); err == nil {
		_ = rc.Read(func(fd uintptr) bool {
			for {
				n, err := unix.Read(int(fd), buf)
				if n > 0 {
					_, _ = c.w.Write(buf[:n])
				}
				if n <= 0 || err != nil {
					return true // empty (EAGAIN), or its end: the loop sees which
				}
			}
		})
	}
	for _, ch := range ws {
		close(ch)
	}
}

// flush returns once everything written into the pipe before it was called
// is in the log (or the pipe has ended): the agent's last words are there
// before its end is reported.
func (c *copier) flush() {
	ch := make(chan struct{})
	c.mu.Lock()
	select {
	case <-c.done:
		c.mu.Unlock()
		return
	default:
	}
	c.waiters = append(c.waiters, ch)
	c.mu.Unlock()
	// A deadline in the past wakes the copy's read at once.
	_ = c.r.SetReadDeadline(time.Unix(1, 0))
	select {
	case <-ch:
	case <-c.done:
	}
}

// finish waits for the pipe's end — every process that held it is gone —
// for at most d, then stops copying: whatever still holds the pipe then
// writes to nothing.
func (c *copier) finish(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		c.flush()
	}
	c.r.Close() // ends a read that waits
	<-c.done
	_ = c.w.Close()
}
