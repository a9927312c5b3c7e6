package shim

import (
	"os"

	"shepherd/backend/sandbox"
)

// startAgent starts the agent in a process group of its own with stdin
// null and stdout and stderr the log; a sandboxed one under sandbox-exec
// with the Seatbelt profile of its grants.
func startAgent(o Options, null, logf *os.File) (int, error) {
	if o.Sandbox == "" {
		return unsandboxed(o, null, logf)
	}
	g, err := LoadGrants(o.Sandbox)
	if err != nil {
		return 0, err
	}
	o.Path, o.Argv = sandbox.Wrap(g, o.Log, o.Path, o.Argv)
	return unsandboxed(o, null, logf)
}
