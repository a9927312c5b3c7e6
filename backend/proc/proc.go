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
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/jonboulle/clockwork"

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
