package shim

import (
	"fmt"
	"os"
	"path/filepath"

	"shepherd/backend/sandbox"
	"shepherd/backend/sandbox/jail"
)

// prepareAgent makes the agent ready to start in a process group of its own
// with stdin null and stdout and stderr the log. A sandboxed agent gets its
// box (package jail) built now — the shim's own executable, run as the box's
// init — and started in it on start. The pid is then the init's, the leader
// of the agent's process group, whose end ends everything in the box; the
// agent's own exit status comes from the init's report.
func prepareAgent(o Options, null, logf *os.File) (prepared, error) {
	if o.Sandbox == "" {
		return prepared{abort: func() {}, start: func() (started, error) {
			pid, err := unsandboxed(o, null, logf)
			return started{pid: pid}, err
		}}, nil
	}
	g, err := LoadGrants(o.Sandbox)
	if err != nil {
		return prepared{}, err
	}
	// The grants were resolved to real folders when they were given; they
	// must still be those folders (not a symlink swapped in since).
	for _, d := range g.WriteDirs {
		if real, err := filepath.EvalSymlinks(d); err != nil || real != d {
			return prepared{}, fmt.Errorf("SandboxUnavailable: the granted folder %s %s; grant the real folder again", d, movedWhy(real, err))
		}
	}
	self, err := os.Executable()
	if err != nil {
		return prepared{}, fmt.Errorf("SandboxUnavailable: cannot find the shim's own executable: %v", err)
	}
	cfg := jail.Config{Grants: g, Hide: o.Hide, Sockets: jail.HostSockets(), Path: o.Path, Argv: o.Argv,
		Dir: o.Dir, Env: os.Environ(), Grace: o.Grace}
	box, err := jail.Prepare(self, cfg, [3]uintptr{null.Fd(), logf.Fd(), logf.Fd()})
	if err != nil {
		return prepared{}, err
	}
	return prepared{abort: box.Abort, start: func() (started, error) {
		if err := box.Run(); err != nil {
			return started{}, err
		}
		return started{pid: box.PID, exit: func(st ExitStatus) ExitStatus {
			if ex := box.Exit(); ex != nil {
				st.ExitCode, st.Signal = ex.Code, ex.Signal
			}
			return st
		}}, nil
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
	box, err := jail.Prepare(self, jail.Config{Probe: true, Grants: sandbox.Grants{}}, [3]uintptr{null.Fd(), null.Fd(), null.Fd()})
	if err != nil {
		return err
	}
	box.Abort()
	return nil
}
