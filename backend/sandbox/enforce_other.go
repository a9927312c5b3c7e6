//go:build !linux && !darwin

package sandbox

import (
	"fmt"
	"runtime"
	"syscall"
)

// Detect reports that this system has no sandbox Shepherd can use.
func Detect(probe []string) Support { return Support{OS: runtime.GOOS} }

// ProcAttr is how every agent is started.
func ProcAttr(g Grants) *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
