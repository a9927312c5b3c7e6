//go:build !linux

package main

// sandboxEntry: only Linux runs the shim as a sandbox's init (macOS wraps
// the agent in sandbox-exec instead).
func sandboxEntry(args []string) (int, bool) { return 0, false }
