// Package proc is the handle on one agent process and the shim that parents
// it: start it (in two steps, so that the shim is on record before the agent
// can exist), watch for its end, signal its process group, and terminate it
// with a grace. It knows nothing of agents, records or states; the engine
// (package supervisor) does. Its API follows os/exec: a Runner starts or
// attaches to a Process, which can be waited for and signalled. A remote
// runner would plug in here.
package proc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jonboulle/clockwork"
	"golang.org/x/sys/unix"

	"shepherd/backend/procid"
	"shepherd/backend/sandbox"
	"shepherd/backend/sandbox/jail"
	"shepherd/backend/shim"
)

// HelloTimeout bounds the wait for the shim to report the agent's pid.
var HelloTimeout = 10 * time.Second

// statusBuf is the buffer of a shim's status pipe.
const statusBuf = 256

// statusWait bounds the wait for a live shim to write an exit status it owes.
const statusWait = 10 * time.Second

// Runner starts and attaches to processes. Durations are on Clock.
type Runner struct {
	Shim  string          // the shepherd-shim executable
	Clock clockwork.Clock // nil: the real clock
	// KillConfirm bounds the wait for a group to vanish after SIGKILL. 0: 5 s.
	KillConfirm time.Duration
	// GroupAlive tells whether a process group still has a member: with
	// exact, a live one (zombies aside); else any, in one system call. nil:
	// procid's. Tests replace it to stand for a group that survives SIGKILL.
	GroupAlive func(pgid int, exact bool) bool

	spawn spawner // starts sandboxed shims (Linux; see shim.SpawnerFlag)
}

func (r *Runner) clock() clockwork.Clock {
	if r.Clock == nil {
		return clockwork.NewRealClock()
	}
	return r.Clock
}

func (r *Runner) killConfirm() time.Duration {
	if r.KillConfirm <= 0 {
		return 5 * time.Second
	}
	return r.KillConfirm
}

func (r *Runner) groupAlive(pgid int, exact bool) bool {
	if r.GroupAlive != nil {
		return r.GroupAlive(pgid, exact)
	}
	if exact {
		return procid.GroupAlive(pgid)
	}
	return procid.GroupExists(pgid)
}

// Spec is what to run.
type Spec struct {
	Path     string   // resolved executable
	Argv     []string // argv[0] as the user wrote the command
	Dir      string
	Env      []string
	Log      string // stdout and stderr, appended (through the shim, which rotates it)
	LogMax   int64  // bytes per log file before the shim rotates it (≤ 0: never)
	LogKeep  int    // rotated log files kept
	ExitFile string // where the shim writes the exit status
	RunFile  string // where the shim writes the pids once the agent runs
	Grace    time.Duration
	Sandbox  string // sandbox.json: the shim runs the agent sandboxed ("": not)
	// SandboxNetwork: the sandboxed agent has @network (the host's network);
	// without it the shim starts in a network namespace of the box's own.
	SandboxNetwork bool
	// Hide are folders a sandboxed agent must not see (Shepherd's own).
	Hide []string
	// ReadOnly are paths inside a sandboxed agent's grants it must not
	// write; Limits its box's limits; Cgroup, when the box has one of its
	// own (Limits.Cgroup), the folder of that cgroup v2, which the shim is
	// started in.
	ReadOnly []string
	Limits   sandbox.Limits
	Cgroup   string
}

// Identity is what a record keeps to find a process again: the agent's pid
// and start time, and its shim's.
type Identity struct {
	PID           int
	StartTime     int64 // ms since the epoch, as the OS reports it
	ShimPID       int
	ShimStartTime int64
	ExitFile      string
}

// Pending is a shim that is started and waits for the go-ahead before it
// starts the agent. Record ShimPID and ShimStartTime, then call Go; or Abort.
type Pending struct {
	r             *Runner
	ShimPID       int
	ShimStartTime int64
	exitFile      string
	runFile       string
	cmd           *exec.Cmd   // the shim, started by this runner
	proc          *os.Process // or the shim, started by the spawner (still our child)
	goAhead       *os.File
	status        *os.File
	cgroup        string // the box's own cgroup, removed once the shim is gone
}

// Prepare starts the shim for spec in a session of its own. It does not
// start the agent: a shim whose go-ahead pipe closes first exits at once.
// A box's cgroup (spec.Cgroup) is the Pending's from then on: removed when
// the shim is gone, or now if it cannot be started.
func (r *Runner) Prepare(spec Spec) (*Pending, error) {
	p, err := r.prepare(spec)
	if err != nil {
		removeCgroup(spec.Cgroup)
	}
	return p, err
}

func (r *Runner) prepare(spec Spec) (*Pending, error) {
	logf, err := os.OpenFile(spec.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	defer logf.Close()
	opts := shim.Options{Path: spec.Path, Argv: spec.Argv, Dir: spec.Dir, Log: spec.Log, LogMax: spec.LogMax, LogKeep: spec.LogKeep,
		ExitFile: spec.ExitFile, RunFile: spec.RunFile, Grace: spec.Grace, GoAhead: true, Sandbox: spec.Sandbox}
	// The shim's own runtime settings go in its environment; the agent's
	// is spec.Env all the same (the shim takes them out again).
	spec.Env, opts.OwnEnv = shim.RuntimeEnv(spec.Env)
	if spec.Sandbox != "" {
		opts.Hide, opts.ReadOnly, opts.Limits = spec.Hide, spec.ReadOnly, spec.Limits
		// Read here, on the host's network: the shim may start on the box's.
		opts.Sockets = jail.HostSockets()
	}
	sr, sw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	gr, gw, err := os.Pipe()
	if err != nil {
		sr.Close()
		sw.Close()
		return nil, err
	}
	p := &Pending{r: r, exitFile: spec.ExitFile, runFile: spec.RunFile, goAhead: gw, status: sr, cgroup: spec.Cgroup}
	p.cmd, p.proc, err = r.startShim(spec, opts, logf, sw, gr)
	sw.Close()
	gr.Close()
	if err != nil {
		sr.Close()
		gw.Close()
		return nil, fmt.Errorf("start shim %s: %w", r.Shim, err)
	}
	p.ShimPID = p.proc.Pid
	// Read now, while the shim cannot have ended: it waits for us.
	p.ShimStartTime, _ = procid.StartTime(p.ShimPID)
	return p, nil
}

// startShim starts the shim for spec, in a session of its own, with stderr
// the log and its status and go-ahead pipes. A sandboxed one is started by
// the spawner where there is one (Linux: as PID 1 of the box's user, PID,
// IPC, UTS and network namespaces; still this process's child, without a
// Cmd); any other by this process.
func (r *Runner) startShim(spec Spec, opts shim.Options, logf, status, goAhead *os.File) (*exec.Cmd, *os.Process, error) {
	if spec.Sandbox != "" {
		req := shim.SpawnRequest{Argv: append([]string{r.Shim}, opts.Args()...), Env: spec.Env,
			Dir: spec.Dir, Network: spec.SandboxNetwork}
		files := []*os.File{logf, status, goAhead}
		if spec.Cgroup != "" {
			cg, err := sandbox.OpenCgroup(spec.Cgroup)
			if err != nil {
				return nil, nil, err
			}
			defer cg.Close()
			req.Cgroup, files = true, append(files, cg)
		}
		proc, err := r.spawnBoxed(req, files)
		if !errors.Is(err, errors.ErrUnsupported) {
			return nil, proc, err
		}
	}
	cmd := exec.Command(r.Shim, opts.Args()...)
	cmd.Env = spec.Env
	cmd.Dir = spec.Dir
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.ExtraFiles = []*os.File{status, goAhead} // shim.StatusFD and shim.GoFD in the shim
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return cmd, cmd.Process, nil
}

// Abort closes the go-ahead pipe, so the shim ends without starting the
// agent, and reaps it.
func (p *Pending) Abort() {
	p.goAhead.Close()
	p.status.Close()
	p.wait()
}

// wait reaps the shim, and removes the box's cgroup.
func (p *Pending) wait() {
	if p.cmd != nil {
		_ = p.cmd.Wait()
	} else {
		_, _ = p.proc.Wait()
	}
	removeCgroup(p.cgroup)
}

// removeCgroup removes a box's cgroup whose shim is gone (the kernel
// refuses while anything lives in it; the next engine's start sweeps what
// is left).
func removeCgroup(dir string) {
	if dir != "" {
		_ = os.Remove(dir)
	}
}

// killStarted ends an agent the shim did start although it could not say
// so in time (a hello that timed out): its run file names it. Without this,
// a start reported as failed could leave an agent no record knows.
func (p *Pending) killStarted() {
	if p.runFile == "" {
		return
	}
	ri, err := shim.ReadRun(p.runFile)
	if err != nil || ri == nil || ri.ShimPID != p.ShimPID || ri.PID <= 0 {
		return
	}
	_ = syscall.Kill(-ri.PID, syscall.SIGKILL)
	_ = syscall.Kill(ri.PID, syscall.SIGKILL)
}

// Go lets the shim start the agent and returns the running process, or why
// it could not start.
func (p *Pending) Go() (*Process, error) {
	_, werr := p.goAhead.Write([]byte{1})
	p.goAhead.Close()
	// The status pipe carries two short lines (a longer one is read whole
	// all the same): a small buffer, kept for every running agent, rather
	// than bufio's 4 KiB (4 MiB of the engine's memory at 1,000 agents).
	rd := bufio.NewReaderSize(p.status, statusBuf)
	h, err := readHello(p.status, rd)
	if err == nil && werr != nil {
		err = fmt.Errorf("shim did not take the go-ahead: %w", werr)
	}
	if err == nil && h.Error != "" {
		err = errors.New(h.Error)
	}
	if err != nil {
		p.status.Close()
		_ = p.proc.Kill()
		p.wait()
		p.killStarted()
		return nil, err
	}
	pr := newProcess(p.r, Identity{PID: h.PID, ShimPID: p.ShimPID, ShimStartTime: p.ShimStartTime, ExitFile: p.exitFile})
	pr.status, pr.statusFile, pr.child, pr.cgroup = rd, p.status, p.proc, p.cgroup
	// The start time is what tells this process from a later one with the
	// same pid; an agent that is already gone has none, and its exit status
	// comes from the shim as usual.
	pr.StartTime, _ = procid.StartTime(h.PID)
	return pr, nil
}

// readHello reads the shim's first line, within HelloTimeout.
func readHello(f *os.File, r *bufio.Reader) (shim.Hello, error) {
	_ = f.SetReadDeadline(time.Now().Add(HelloTimeout))
	defer f.SetReadDeadline(time.Time{})
	line, err := r.ReadBytes('\n')
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return shim.Hello{}, fmt.Errorf("shim did not report the agent's pid within %s", HelloTimeout)
	}
	if err != nil && len(line) == 0 {
		return shim.Hello{}, fmt.Errorf("shim ended before starting the agent: %w", err)
	}
	h, err := shim.ParseHello(line)
	if err != nil {
		return shim.Hello{}, fmt.Errorf("shim answered %q: %w", strings.TrimSpace(string(line)), err)
	}
	return h, nil
}

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
