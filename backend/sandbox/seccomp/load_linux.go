package seccomp

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Filter is the filter for this process's architecture, assembled once.
type Filter struct{ prog []unix.SockFilter }

// New is the filter for this process's architecture (assembled by go
// generate: zprogram.go).
func New() (*Filter, error) {
	raw, ok := programs[runtime.GOARCH]
	if !ok {
		return nil, fmt.Errorf("no seccomp filter for %s (amd64 and arm64 have one)", runtime.GOARCH)
	}
	f := &Filter{prog: make([]unix.SockFilter, len(raw))}
	for i, r := range raw {
		f.prog[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return f, nil
}

// Load installs the filter on the calling thread, for it and everything it
// starts from then on (never the process's other threads). The thread must
// have no_new_privs set.
func (f *Filter) Load() error {
	fprog := unix.SockFprog{Len: uint16(len(f.prog)), Filter: &f.prog[0]}
	if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("install the seccomp filter: %w", e)
	}
	return nil
}
