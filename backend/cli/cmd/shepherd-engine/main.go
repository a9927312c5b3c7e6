// Command shepherd-engine is Shepherd's engine without a window: built
// without cgo (no GTK, no WebKit), it runs `serve` — which the window starts
// when no engine runs — and every other verb of the command line.
package main

import (
	"os"
	"runtime/debug"

	"shepherd/backend/cli"
)

func main() {
	// A daemon's heap is small and mostly idle: collecting at half the
	// default growth keeps its memory near what it uses (about 2 MiB less
	// with 100 agents, bench/daemon) for no CPU that shows. GOGC overrides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	os.Exit(cli.Run(os.Args[1:]))
}
