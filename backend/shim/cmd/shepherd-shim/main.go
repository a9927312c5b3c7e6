// Command shepherd-shim is the per-agent parent process the engine starts;
// see package shim.
package main

import (
	"fmt"
	"io"
	"os"
	"shepherd/backend/sandbox/restrict"
	"syscall"

	"shepherd/backend/shim"
)

// inherited returns descriptor fd if the shim was given it, marked
// close-on-exec: the agent must not hold the engine's pipes open.
func inherited(fd uintptr, name string) *os.File {
	f := os.NewFile(fd, name)
	if f == nil {
		return nil
	}
	if _, err := f.Stat(); err != nil {
		return nil
	}
	syscall.CloseOnExec(int(fd))
	return f
}

// writer and reader keep a nil *os.File from becoming a non-nil interface.
func writer(f *os.File) io.WriteCloser {
	if f == nil {
		return nil
	}
	return f
}

func reader(f *os.File) io.ReadCloser {
	if f == nil {
		return nil
	}
	return f
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == shim.SandboxExecFlag {
		// The sandboxed agent's first step: descriptor 3 is the error pipe.
		errw := inherited(shim.StatusFD, "errors")
		if errw == nil {
			os.Exit(sandboxExec(os.Args[2:], io.Discard))
		}
		os.Exit(sandboxExec(os.Args[2:], errw))
	}
	// The engine passes the status pipe as descriptor 3; started by hand,
	// there is none and the shim only writes its files.
	status := inherited(shim.StatusFD, "status")
	os.Exit(shim.Main(os.Args[1:], writer(status), func() io.ReadCloser { return reader(inherited(shim.GoFD, "go-ahead")) }))
}

// sandboxExec restricts this process by the agent's grants and execs the
// agent (see shim.SandboxExecFlag); it returns only when that failed, after
// writing why to errw.
func sandboxExec(args []string, errw io.Writer) int {
	if len(args) < 3 {
		fmt.Fprintf(errw, "shepherd-shim: usage: %s SANDBOX.JSON PATH ARGV...", shim.SandboxExecFlag)
		return 2
	}
	file, path, argv := args[0], args[1], args[2:]
	g, err := shim.LoadGrants(file)
	if err != nil {
		fmt.Fprint(errw, err)
		return 126
	}
	if err := restrict.Restrict(g); err != nil {
		fmt.Fprintf(errw, "SandboxUnavailable: %v", err)
		return 126
	}
	err = syscall.Exec(path, argv, os.Environ())
	fmt.Fprint(errw, err.Error())
	return 127
}
