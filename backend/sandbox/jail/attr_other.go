//go:build !linux

package jail

import "syscall"

// ShimAttr: off Linux a sandboxed agent's shim starts like any other, in a
// session of its own (macOS wraps the agent in sandbox-exec instead).
func ShimAttr(network bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// HostSockets: only a Linux box covers the host's sockets.
func HostSockets() []string { return nil }
