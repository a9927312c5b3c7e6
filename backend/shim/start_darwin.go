package shim

import (
	"os"

	"shepherd/backend/sandbox"
)

// startAgent starts the agent in a process group of its own with stdin
// null and stdout and stderr the log; a sandboxed one under sandbox-exec
// with the Seatbelt profile of its grants.
func startAgent(o Options, null, logf *os.File) (started, error) {
	if o.Sandbox == "" {
		pid, err := unsandboxed(o, null, logf)
		return started{pid: pid}, err
	}
	g, err := LoadGrants(o.Sandbox)
	if err != nil {
		return started{}, err
	}
	o.Path, o.Argv = sandbox.Wrap(g, o.Log, o.Hide, o.Path, o.Argv)
	pid, err := unsandboxed(o, null, logf)
	return started{pid: pid}, err
}

// ProbeSandbox: on macOS the engine checks for sandbox-exec itself.
func ProbeSandbox(self string) error { return nil }
