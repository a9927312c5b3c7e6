package proc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"shepherd/backend/procid"
	"shepherd/backend/shim"
)

// Process is one running agent (the leader of its own process group) and
// its shim.
type Process struct {
	Identity
	r *Runner

	// The shim's status pipe, for processes this runner started; nil for an
	// attached one, which is watched through its pid instead.
	status     *bufio.Reader
	statusFile *os.File
	child      *os.Process // the shim, when it is our child
	cgroup     string      // the box's own cgroup, removed when the shim is reaped

	attached bool // started by another engine

	once sync.Once
	done chan struct{}
	exit *shim.ExitStatus
}

func newProcess(r *Runner, id Identity) *Process {
	return &Process{Identity: id, r: r, done: make(chan struct{})}
}

// Attach returns a handle on a process another engine started.
func (r *Runner) Attach(id Identity) *Process {
	p := newProcess(r, id)
	p.attached = true
	return p
}

// Attached reports whether the process was started by another engine (and
// is watched through its pid, not its shim's pipe).
func (p *Process) Attached() bool { return p.attached }

// Done is closed once the agent's end has been seen (by Wait).
func (p *Process) Done() <-chan struct{} { return p.done }

// Exit is the agent's exit status once Done is closed; nil if it is not
// known (its shim was killed before it could tell).
func (p *Process) Exit() *shim.ExitStatus {
	select {
	case <-p.done:
		return p.exit
	default:
		return nil
	}
}

func (p *Process) finish(st *shim.ExitStatus) {
	p.once.Do(func() {
		p.exit = st
		close(p.done)
	})
}

// Wait blocks until the agent ends and returns its exit status (nil if not
// known), or until ctx ends (then ctx's error, and Done stays open). Call it
// once; it is what closes Done.
func (p *Process) Wait(ctx context.Context) (*shim.ExitStatus, error) {
	if p.status != nil {
		st, err := p.readExitLine(ctx)
		p.statusFile.Close()
		if err == nil {
			p.finish(st)
			return st, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The shim ended without a word (it was killed): watch the agent.
	}
	if err := procid.WaitExit(ctx, p.PID); err != nil {
		return nil, err
	}
	st := p.r.AwaitExit(ctx, p.Identity)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	p.finish(st)
	return st, nil
}

// readExitLine waits for the shim's second line on the status pipe: the
// exit status, sent the moment the shim reaped the agent.
func (p *Process) readExitLine(ctx context.Context) (*shim.ExitStatus, error) {
	stop := context.AfterFunc(ctx, func() { _ = p.statusFile.SetReadDeadline(time.Now()) })
	defer stop()
	line, err := p.status.ReadBytes('\n')
	if err != nil {
		return nil, err
	}
	st, err := shim.ParseExit(line)
	if err != nil {
		return nil, fmt.Errorf("shim sent %q: %w", strings.TrimSpace(string(line)), err)
	}
	if st.PID != p.PID {
		return nil, fmt.Errorf("shim sent the exit of pid %d, not %d", st.PID, p.PID)
	}
	return st, nil
}

// Reap waits for the shim, when it is this engine's child, to end after the
// agent did, and reaps it; it gives up when ctx ends (the shim is then
// reaped by whoever inherits it). Call it after Done.
func (p *Process) Reap(ctx context.Context) {
	if p.child == nil {
		return
	}
	if procid.WaitExit(ctx, p.ShimPID) != nil {
		return
	}
	var ws unix.WaitStatus
	if pid, _ := unix.Wait4(p.ShimPID, &ws, unix.WNOHANG, nil); pid == p.ShimPID {
		_ = p.child.Release()
		p.child = nil
		removeCgroup(p.cgroup)
	}
}
