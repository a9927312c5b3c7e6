package proc

import (
	"context"
	"time"

	"shepherd/backend/procid"
	"shepherd/backend/shim"
)

// WaitShim waits until the shim pid (started at start, 0: unknown) has
// ended — it stops what its agent left in its group before it exits — or
// ctx is done. A shim whose pid now names another process is not waited
// for.
func WaitShim(ctx context.Context, pid int, start int64) {
	if pid <= 0 {
		return
	}
	if start != 0 && procid.Compare(pid, start) != procid.Same {
		return
	}
	_ = procid.WaitExit(ctx, pid)
}

// AwaitExit returns the exit status the shim of id recorded for its agent,
// which is known to have ended. While the shim lives the status is coming,
// so it waits for it (until the shim ends, or statusWait); nil when there is
// none (the shim was killed first).
func (r *Runner) AwaitExit(ctx context.Context, id Identity) *shim.ExitStatus {
	var st *shim.ExitStatus
	r.awaitShim(ctx, id, func() bool {
		s, _ := shim.ReadExit(id.ExitFile)
		if s != nil && s.PID == id.PID {
			st = s
		}
		return st != nil
	})
	return st
}

// AwaitRun returns what the shim of id wrote to runFile once it started the
// agent. While the shim lives and has not written it, the agent may be about
// to start, so it waits; nil when the shim ended without starting one.
func (r *Runner) AwaitRun(ctx context.Context, runFile string, id Identity) *shim.RunInfo {
	var ri *shim.RunInfo
	r.awaitShim(ctx, id, func() bool {
		ri, _ = shim.ReadRun(runFile)
		return ri != nil
	})
	return ri
}

// awaitShim calls read until it reports that the file it reads is there,
// for as long as the shim of id lives (and at most statusWait). The shim
// writes its files a moment after the event they record, so the file is
// re-read on a short real-time backoff: this waits on another process's
// I/O, not on a duration that means anything. The shim's end wakes it at
// once.
func (r *Runner) awaitShim(ctx context.Context, id Identity, read func() bool) {
	if read() {
		return
	}
	if !ShimAlive(id) {
		read() // written just before the shim ended
		return
	}
	wctx, cancel := context.WithCancel(ctx)
	shimGone := make(chan struct{})
	go func() {
		_ = procid.WaitExit(wctx, id.ShimPID)
		close(shimGone)
	}()
	defer func() {
		cancel()
		<-shimGone
	}()
	limit := r.clock().NewTimer(statusWait)
	defer limit.Stop()
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		t := time.NewTimer(wait)
		last := true
		select {
		case <-shimGone:
		case <-limit.Chan():
		case <-ctx.Done():
		case <-t.C:
			last = false
		}
		t.Stop()
		if read() || last {
			return
		}
	}
}

// ShimAlive reports whether the shim of id still runs (same pid and start
// time).
func ShimAlive(id Identity) bool {
	if id.ShimPID <= 0 {
		return false
	}
	c := procid.Compare(id.ShimPID, id.ShimStartTime)
	return c == procid.Same || c == procid.NoRecord
}
