// Command shepherd-shim is the per-agent parent process the engine starts;
// see package shim.
package main

import (
	"os"

	"shepherd/backend/shim"
)

func main() { os.Exit(shim.Main(os.Args[1:], os.Stdout)) }
