package shim

import (
	"errors"
	"os"

	"shepherd/backend/sandbox"
)

// prepareAgent makes ready the agent in a process group of its own with stdin
// null and stdout and stderr the log, once waitGo says so; a sandboxed one
// under sandbox-exec with the Seatbelt profile of its grants.
func prepareAgent(o Options, null, out *os.File, waitGo func() bool) (prepared, error) {
	if o.Sandbox != "" {
		g, err := LoadGrants(o.Sandbox)
		if err != nil {
			return prepared{}, err
		}
		ro := o.ReadOnly
		if len(g.WriteDirs) > 0 {
			ro = append(ro, sandbox.FindRepos(g.WriteDirs, sandbox.DefaultScan).Paths...)
		}
		o.Path, o.Argv = sandbox.Wrap(g, "", o.Hide, sandbox.WithTargets(ro, g.WriteDirs), o.Path, o.Argv) // it writes its output into a pipe, never its log
	}
	return prepared{start: func() (started, error) {
		if !waitGo() {
			return started{}, errNoGo
		}
		pid, err := unsandboxed(o, null, out)
		return started{pid: pid, hostPID: pid, shimPID: os.Getpid()}, err
	}}, nil
}

// ProbeSandbox: on macOS the engine checks for sandbox-exec itself.
func ProbeSandbox(self string) (string, error) { return "", nil }

// probeBoxFlag is Linux only.
const probeBoxFlag = "--sandbox-probe-box"

func probeBox([]string) error { return errors.New("SandboxUnavailable: boxes are Linux only") }
