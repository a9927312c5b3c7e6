package seccomp

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Filter is the filter for this process's architecture, assembled once.
type Filter struct{ prog []unix.SockFilter }

// New assembles the filter for this process's architecture.
func New() (*Filter, error) {
	insts, err := Program(runtime.GOARCH)
	if err != nil {
		return nil, err
	}
	raw, err := bpf.Assemble(insts)
	if err != nil {
		return nil, fmt.Errorf("assemble the seccomp filter: %w", err)
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
