package proc

import (
	"context"
	"syscall"
	"time"

	"shepherd/backend/procid"
)

// Signal sends sig to the agent's process group.
func (p *Process) Signal(sig syscall.Signal) error { return procid.SignalGroup(p.PID, sig) }

// WaitGone waits up to d (on the runner's clock) for the agent's end to be
// seen and its whole process group to be gone.
func (p *Process) WaitGone(ctx context.Context, d time.Duration) bool {
	timer := p.r.clock().NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.Chan():
		return false
	case <-ctx.Done():
		return false
	}
	// Members that are only zombies about to be reaped make the group exist
	// for a moment; the exact check, which lists every process, is kept for
	// a group that lingers. The re-checks follow the kernel's reaping, in
	// real time.
	exactAfter := time.Now().Add(50 * time.Millisecond)
	for wait := time.Millisecond; ; wait = min(2*wait, 20*time.Millisecond) {
		if !p.r.groupAlive(p.PID, false) || time.Now().After(exactAfter) && !p.r.groupAlive(p.PID, true) {
			return true
		}
		t := time.NewTimer(wait)
		select {
		case <-timer.Chan():
			t.Stop()
			return false
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

// Step is one signal of a termination and how long to wait after it (a
// zero Signal: none, only the wait — the signal was sent already).
type Step struct {
	Signal syscall.Signal
	Wait   time.Duration
}

// Terminate ends the agent's process group: each step's signal, then its
// wait for the group to go; SIGKILL if it is still there, then up to
// KillConfirm for it to vanish. onLinger (may be nil) is called when the
// group is still alive a moment after SIGKILL, before the longer wait. It
// reports whether SIGKILL was sent and whether the group is gone.
func (p *Process) Terminate(ctx context.Context, steps []Step, onLinger func()) (killed, gone bool) {
	for _, s := range steps {
		if s.Signal != 0 {
			_ = p.Signal(s.Signal)
		}
		if p.WaitGone(ctx, s.Wait) {
			return false, true
		}
		if ctx.Err() != nil {
			return false, false
		}
	}
	return true, p.Kill(ctx, onLinger)
}

// Kill sends SIGKILL to the group and waits up to KillConfirm for it to be
// gone; onLinger as for Terminate.
func (p *Process) Kill(ctx context.Context, onLinger func()) bool {
	_ = p.Signal(syscall.SIGKILL)
	// A group is usually gone within milliseconds of SIGKILL.
	confirm := p.r.killConfirm()
	if p.WaitGone(ctx, min(confirm, 100*time.Millisecond)) {
		return true
	}
	if onLinger != nil {
		onLinger()
	}
	return p.WaitGone(ctx, confirm)
}
