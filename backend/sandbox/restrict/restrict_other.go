//go:build !linux

// Package restrict enforces a sandbox's filesystem rules on the calling
// process — on Linux. Elsewhere (macOS: sandbox-exec, see sandbox.Wrap) it
// only fails.
package restrict

import (
	"fmt"
	"runtime"

	"shepherd/backend/sandbox"
)

// Restrict always fails off Linux.
func Restrict(g sandbox.Grants) error {
	return fmt.Errorf("%w: restricting the process itself is Linux only (%s)", sandbox.ErrUnavailable, runtime.GOOS)
}
