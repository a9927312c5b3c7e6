package shim

import (
	"fmt"
	"os"
	"syscall"

	"shepherd/backend/sandbox"
)

// SandboxProbeFlag makes the shim exit 0 at once: the engine starts it in
// the namespaces a sandboxed agent gets, to learn whether it can.
const SandboxProbeFlag = "--sandbox-probe"

// SandboxExecFlag starts the shim as the sandboxed agent's first step: in
// the agent's process (its namespaces already made), it restricts itself by
// the grants and then becomes the agent with exec, so the agent and every
// descendant inherit the restriction. Arguments: sandbox.json, the
// executable's path, then argv. What went wrong is written to descriptor 3
// (close-on-exec: a successful exec closes it with nothing written). The
// shim's command handles it (it alone links the Landlock library).
const SandboxExecFlag = "--sandbox-exec"

// unsandboxed is how an agent without a sandbox is started.
func unsandboxed(o Options, null, logf *os.File) (int, error) {
	return syscall.ForkExec(o.Path, o.Argv, &syscall.ProcAttr{
		Dir:   o.Dir,
		Env:   os.Environ(),
		Files: []uintptr{null.Fd(), logf.Fd(), logf.Fd()},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
}

// LoadGrants reads the agent's sandbox.json; without it nothing starts.
func LoadGrants(path string) (sandbox.Grants, error) {
	g, err := sandbox.Load(path)
	if err != nil {
		return g, fmt.Errorf("SandboxUnavailable: cannot read the agent's grants, so it is not started: %v", err)
	}
	return g, nil
}
