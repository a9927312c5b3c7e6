package shim

import (
	"errors"
	"os"

	"shepherd/backend/sandbox"
)

// prepareAgent makes ready the agent in a process group of its own with stdin
// null and stdout and stderr the log; a sandboxed one under sandbox-exec
// with the Seatbelt profile of its grants.
func prepareAgent(o Options, _ begun, null, logf *os.File) (prepared, error) {
	if o.Sandbox != "" {
		g, err := LoadGrants(o.Sandbox)
		if err != nil {
			return prepared{}, err
		}
		o.Path, o.Argv = sandbox.Wrap(g, o.Log, o.Hide, o.Path, o.Argv)
	}
	return prepared{abort: func() {}, start: func() (started, error) {
		pid, err := unsandboxed(o, null, logf)
		return started{pid: pid, hostPID: pid, shimPID: os.Getpid()}, err
	}}, nil
}

// begun: nothing is begun early on macOS.
type begun struct{}

func beginAgent(Options) begun { return begun{} }

// ProbeSandbox: on macOS the engine checks for sandbox-exec itself.
func ProbeSandbox(self string) error { return nil }

// probeBoxFlag is Linux only.
const probeBoxFlag = "--sandbox-probe-box"

func probeBox() error { return errors.New("SandboxUnavailable: boxes are Linux only") }
