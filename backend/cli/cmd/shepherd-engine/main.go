// Command shepherd-engine is Shepherd's engine without a window: built
// without cgo (no GTK, no WebKit), it runs `serve` — which the window starts
// when no engine runs — and every other verb of the command line.
package main

import (
	"os"

	"shepherd/backend/cli"
)

func main() { os.Exit(cli.Run(os.Args[1:])) }
