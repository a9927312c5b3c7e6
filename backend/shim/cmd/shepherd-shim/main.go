// Command shepherd-shim is the per-agent parent process the engine starts;
// see package shim.
package main

import (
	"os"
	"syscall"

	"shepherd/backend/shim"
)

func main() {
	// The engine passes the status pipe as descriptor 3; started by hand,
	// there is none and the shim only writes its files.
	var status *os.File
	if f := os.NewFile(shim.StatusFD, "status"); f != nil {
		if _, err := f.Stat(); err == nil {
			// Not for the agent: it must not hold the engine's pipe open.
			syscall.CloseOnExec(shim.StatusFD)
			status = f
		}
	}
	if status == nil {
		os.Exit(shim.Main(os.Args[1:], nil))
	}
	os.Exit(shim.Main(os.Args[1:], status))
}
