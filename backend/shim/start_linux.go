package shim

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"shepherd/backend/sandbox"
	"shepherd/backend/sandbox/jail"
)

// startAgent starts the agent in a process group of its own with stdin
// null and stdout and stderr the log. A sandboxed agent is started in a box
// (package jail): the shim's own executable, run as the box's init, builds
// it and starts the agent inside. The pid returned is then the init's — the
// leader of the agent's process group, whose end ends everything in the
// box — and the agent's own exit status comes from the init's report.
func startAgent(o Options, null, logf *os.File) (started, error) {
	if o.Sandbox == "" {
		pid, err := unsandboxed(o, null, logf)
		return started{pid: pid}, err
	}
	g, err := LoadGrants(o.Sandbox)
	if err != nil {
		return started{}, err
	}
	// The grants were resolved to real folders when they were given; they
	// must still be those folders (not a symlink swapped in since).
	for _, d := range g.WriteDirs {
		if real, err := filepath.EvalSymlinks(d); err != nil || real != d {
			return started{}, fmt.Errorf("SandboxUnavailable: the granted folder %s %s; grant the real folder again", d, movedWhy(real, err))
		}
	}
	self, err := os.Executable()
	if err != nil {
		return started{}, fmt.Errorf("SandboxUnavailable: cannot find the shim's own executable: %v", err)
	}
	cfg := jail.Config{Grants: g, Hide: o.Hide, Sockets: jail.HostSockets(), Path: o.Path, Argv: o.Argv,
		Dir: o.Dir, Env: os.Environ(), Grace: o.Grace}
	box, err := jail.Start(self, cfg, [3]uintptr{null.Fd(), logf.Fd(), logf.Fd()})
	if err != nil {
		return started{}, err
	}
	return started{pid: box.PID, exit: func(st ExitStatus) ExitStatus {
		if ex := box.Exit(); ex != nil {
			st.ExitCode, st.Signal = ex.Code, ex.Signal
		}
		return st
	}}, nil
}

func movedWhy(real string, err error) string {
	if err != nil {
		return fmt.Sprintf("cannot be resolved (%v)", err)
	}
	return "now leads to " + real
}

// ProbeSandbox builds a box exactly as for an agent without @network and
// without running anything in it: nil when this machine can.
func ProbeSandbox(self string) error {
	null, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer null.Close()
	box, err := jail.Start(self, jail.Config{Probe: true, Grants: sandbox.Grants{}}, [3]uintptr{null.Fd(), null.Fd(), null.Fd()})
	if err != nil {
		return err
	}
	box.Exit()
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(box.PID, &ws, 0, nil)
	return nil
}
