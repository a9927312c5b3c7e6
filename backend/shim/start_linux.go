package shim

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"shepherd/backend/sandbox"
)

// startAgent starts the agent in a process group of its own with stdin
// null and stdout and stderr the log. A sandboxed agent is started through
// the shim's own executable (SandboxExecFlag) in the namespaces its grants
// call for; it restricts itself and execs the agent. The pid returned is
// the agent's either way (exec keeps it).
func startAgent(o Options, null, logf *os.File) (int, error) {
	if o.Sandbox == "" {
		return unsandboxed(o, null, logf)
	}
	g, err := LoadGrants(o.Sandbox)
	if err != nil {
		return 0, err
	}
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("SandboxUnavailable: cannot find the shim's own executable: %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	argv := append([]string{"shepherd-shim", SandboxExecFlag, o.Sandbox, o.Path}, o.Argv...)
	pid, err := syscall.ForkExec(self, argv, &syscall.ProcAttr{
		Dir:   o.Dir,
		Env:   os.Environ(),
		Files: []uintptr{null.Fd(), logf.Fd(), logf.Fd(), w.Fd()},
		Sys:   sandbox.ProcAttr(g),
	})
	w.Close()
	if err != nil {
		r.Close()
		if !g.Network && (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC)) {
			return 0, fmt.Errorf("SandboxUnavailable: cannot create the network namespace that takes the network away: %v", err)
		}
		return 0, err
	}
	msg, _ := io.ReadAll(r)
	r.Close()
	if len(msg) > 0 {
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
		return 0, errors.New(strings.TrimSpace(string(msg)))
	}
	return pid, nil
}
