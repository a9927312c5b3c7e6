package shim

import (
	"fmt"
	"os"
	"syscall"

	"shepherd/backend/sandbox"
)

// SandboxProbeFlag makes the shim build a sandbox exactly as for an agent
// and run nothing in it: it exits 0 when it could, and says why not on
// stderr otherwise. The engine runs it once to learn what this machine can
// enforce.
const SandboxProbeFlag = "--sandbox-probe"

// unsandboxed is how an agent without a sandbox is started.
func unsandboxed(o Options, null, out *os.File) (int, error) {
	return syscall.ForkExec(o.Path, o.Argv, &syscall.ProcAttr{
		Dir:   o.Dir,
		Env:   agentEnv(os.Environ(), o.OwnEnv),
		Files: []uintptr{null.Fd(), out.Fd(), out.Fd()},
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
