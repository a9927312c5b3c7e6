package shim

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"shepherd/backend/sandbox"
	"shepherd/backend/sandbox/jail"
)

// Restrict applies a sandbox's Landlock rules to the calling thread, and
// Seccomp installs the box's system-call filter on it. The shim's command
// sets them (packages restrict and seccomp): the engine, which imports this
// package for its protocol, links neither.
var (
	Restrict func(sandbox.Grants) error
	Seccomp  func() error
)

// prepareAgent makes the agent ready to start in a process group of its own
// with stdin null and stdout and stderr out (the pipe the shim copies into its log), once waitGo says so. A
// sandboxed agent's box (package jail: the engine started this shim as PID 1
// of the box's namespaces, jail.ShimAttr) is built at once on a thread of
// its own, which then waits for the go-ahead and starts the agent: the
// box's cost overlaps the engine's record write. Its pids are then the
// box's (for waiting and signals from here) and the host's (what the engine
// is told).
func prepareAgent(o Options, null, out *os.File, waitGo func() bool) (prepared, error) {
	if o.Sandbox == "" {
		return prepared{start: func() (started, error) {
			if !waitGo() {
				return started{}, errNoGo
			}
			pid, err := unsandboxed(o, null, out)
			return started{pid: pid, hostPID: pid, shimPID: os.Getpid()}, err
		}}, nil
	}
	g, err := LoadGrants(o.Sandbox)
	if err != nil {
		return prepared{}, err
	}
	cfg, err := boxConfig(jail.Config{Grants: g, Hide: o.Hide, Sockets: o.Sockets, ReadOnly: o.ReadOnly,
		ScanRepos: len(g.WriteDirs) > 0, Limits: o.Limits, Path: o.Path, Argv: o.Argv, Dir: o.Dir, Env: agentEnv(os.Environ(), o.OwnEnv)})
	if err != nil {
		return prepared{}, err
	}
	shimPID, err := jail.SelfHostPID()
	if err != nil {
		return prepared{}, fmt.Errorf("SandboxUnavailable: cannot read the shim's own pid: %v", err)
	}
	box := jail.Begin(cfg, locks(), waitGo, [3]uintptr{null.Fd(), out.Fd(), out.Fd()})
	return prepared{start: func() (started, error) {
		st := box.Wait()
		switch {
		case st.NoGo:
			return started{}, errNoGo
		case st.Err != nil:
			return started{}, st.Err
		}
		return started{pid: st.PID, hostPID: st.HostPID, shimPID: shimPID, drain: jail.Drain}, nil
	}}, nil
}

// boxConfig checks cfg's grants.
func boxConfig(cfg jail.Config) (jail.Config, error) {
	// The grants were resolved to real folders when they were given; they
	// must still be those folders (not a symlink swapped in since).
	for _, d := range cfg.Grants.WriteDirs {
		if real, err := filepath.EvalSymlinks(d); err != nil || real != d {
			return cfg, fmt.Errorf("SandboxUnavailable: the granted folder %s %s; grant the real folder again", d, movedWhy(real, err))
		}
	}
	if Restrict == nil || Seccomp == nil {
		return cfg, errors.New("SandboxUnavailable: this shim was built without Landlock or the seccomp filter")
	}
	return cfg, nil
}

// locks are the command's Landlock rules (Restrict) and seccomp filter.
func locks() jail.Locks {
	return jail.Locks{Landlock: func(c jail.Config) error { return Restrict(c.Grants) }, Seccomp: Seccomp}
}

func movedWhy(real string, err error) string {
	if err != nil {
		return fmt.Sprintf("cannot be resolved (%v)", err)
	}
	return "now leads to " + real
}

// probeBoxFlag makes the shim, started by ProbeSandbox in a box's
// namespaces, build a box as for an agent without @network and exit.
const probeBoxFlag = "--sandbox-probe-box"

// ProbeSandbox starts the shim's executable in a box's namespaces, the way
// the engine starts a sandboxed agent's shim, to build a box exactly as for
// an agent without @network and run nothing in it: nil when this machine
// can, with what the box found out (sandbox.ProbePIDLimit).
func ProbeSandbox(self string) (string, error) {
	var stderr bytes.Buffer
	r, w, err := os.Pipe()
	if err != nil {
		return "", err
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return "", err
	}
	defer null.Close()
	// The host's sockets are read here, on the host's network, as the
	// engine reads them for an agent.
	args := append([]string{"shepherd-shim", probeBoxFlag}, jail.HostSockets()...)
	pid, err := syscall.ForkExec(self, args, &syscall.ProcAttr{
		Files: []uintptr{null.Fd(), null.Fd(), w.Fd()},
		Sys:   jail.ShimAttr(false),
	})
	w.Close()
	if err != nil {
		r.Close()
		return "", fmt.Errorf("SandboxUnavailable: cannot create the box's namespaces (user, PID, IPC, UTS, network): %v", err)
	}
	_, _ = stderr.ReadFrom(r)
	r.Close()
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		return "", err
	}
	if ws.Exited() && ws.ExitStatus() == 0 {
		return strings.TrimSpace(stderr.String()), nil
	}
	if msg := strings.TrimSpace(stderr.String()); msg != "" {
		return "", errors.New(msg)
	}
	return "", fmt.Errorf("SandboxUnavailable: the probe ended with %v", ws)
}

// probeBox builds a box covering sockets, starts nothing in it, and says
// whether it could (the shim as probeBoxFlag); on success it prints what
// the box found out on stderr.
func probeBox(sockets []string) error {
	cfg, err := boxConfig(jail.Config{Grants: sandbox.Grants{}, Sockets: sockets,
		Limits: sandbox.Limits{ShmMiB: sandbox.DefaultShmMiB}})
	if err != nil {
		return err
	}
	if jail.PIDLimitWorks() {
		fmt.Fprintln(os.Stderr, sandbox.ProbePIDLimit)
	}
	// No go-ahead: build, then start nothing.
	st := jail.Begin(cfg, locks(), func() bool { return false }, [3]uintptr{}).Wait()
	return st.Err
}
