//go:build !linux && !darwin

package sandbox

import (
	"fmt"
	"runtime"
)

// Detect reports that this system has no sandbox Shepherd can use.
func Detect(probe []string) Support { return Support{OS: runtime.GOOS} }

// BoxTmp is a sandboxed agent's TMPDIR: none.
const BoxTmp = ""
