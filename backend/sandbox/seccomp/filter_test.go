package seccomp

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
)

// data is a seccomp_data for the VM, which reads big-endian (the kernel
// reads it in the machine's order; the program's loads are the same).
func data(archID, nr, arg0 uint32) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[0:], nr)
	binary.BigEndian.PutUint32(b[4:], archID)
	binary.BigEndian.PutUint32(b[16:], arg0)
	return b
}

func run(t *testing.T, vm *bpf.VM, archID, nr uint32) uint32 {
	t.Helper()
	return runArg(t, vm, archID, nr, 0)
}

func runArg(t *testing.T, vm *bpf.VM, archID, nr, arg0 uint32) uint32 {
	t.Helper()
	v, err := vm.Run(data(archID, nr, arg0))
	if err != nil {
		t.Fatal(err)
	}
	return uint32(v)
}

// Every denied call is refused with its errno and every other call of the
// architecture is allowed, in both of each machine's architectures; the
// numbers match go-seccomp-bpf's tables.
func TestProgram(t *testing.T) {
	for _, tc := range []struct {
		goarch         string
		native, compat *arch.Info
	}{{"amd64", arch.X86_64, arch.I386}, {"arm64", arch.AARCH64, arch.ARM}} {
		insts, err := Program(tc.goarch)
		if err != nil {
			t.Fatal(err)
		}
		vm, err := bpf.NewVM(insts)
		if err != nil {
			t.Fatalf("%s: %v", tc.goarch, err)
		}
		if _, err := bpf.Assemble(insts); err != nil {
			t.Fatal(err)
		}
		for _, a := range []*arch.Info{tc.native, tc.compat} {
			want := map[uint32]uint32{}
			for _, r := range Denied {
				for _, n := range r.Names {
					if nr, ok := a.SyscallNames[n]; ok {
						if r.FlagMask != 0 {
							// Refused with a namespace flag, allowed without.
							if got := runArg(t, vm, uint32(a.ID), uint32(nr), 0x10000000); got != retErrno|r.Errno {
								t.Errorf("%s %s(CLONE_NEWUSER): %#x", a.Name, n, got)
							}
							if got := runArg(t, vm, uint32(a.ID), uint32(nr), 0x00050f00|17); got != retAllow {
								t.Errorf("%s %s(a thread's flags): %#x", a.Name, n, got)
							}
							want[uint32(nr)] = retAllow // its first argument is 0 in the loop below
							continue
						}
						want[uint32(nr)] = retErrno | r.Errno
						if sysnum[uint32(a.ID)][n] != uint32(nr) {
							t.Errorf("%s %s: generated %d, table %d (go generate)", a.Name, n, sysnum[uint32(a.ID)][n], nr)
						}
					}
				}
			}
			if len(want) < 20 {
				t.Fatalf("%s: only %d denied calls", a.Name, len(want))
			}
			for nr := range a.SyscallNumbers {
				got := run(t, vm, uint32(a.ID), uint32(nr))
				w, denied := want[uint32(nr)]
				if !denied {
					w = retAllow
				}
				if got != w {
					t.Errorf("%s call %d (%s): %#x, want %#x", a.Name, nr, a.SyscallNumbers[nr], got, w)
				}
			}
		}
		// Any other architecture gets nothing.
		if got := run(t, vm, 0x12345, 1); got != retErrno|errENOSYS {
			t.Errorf("%s: a foreign architecture: %#x", tc.goarch, got)
		}
	}
	// The named calls of the brief, by number, on x86-64 and i386.
	insts, _ := Program("amd64")
	vm, _ := bpf.NewVM(insts)
	for _, n := range []string{"keyctl", "add_key", "request_key", "bpf", "perf_event_open", "kexec_load", "finit_module",
		"io_uring_setup", "userfaultfd", "open_by_handle_at", "reboot", "swapon", "settimeofday", "setns", "mount", "clone3"} {
		for _, a := range []*arch.Info{arch.X86_64, arch.I386} {
			if got := run(t, vm, uint32(a.ID), uint32(a.SyscallNames[n])); got == retAllow {
				t.Errorf("%s %s allowed", a.Name, n)
			}
		}
	}
	// x32 calls (keyctl among them) are refused.
	if got := run(t, vm, auditX86_64, x32Bit|uint32(arch.X32.SyscallNames["keyctl"])); got != retErrno|errENOSYS {
		t.Errorf("x32 keyctl: %#x", got)
	}
	for _, n := range []string{"read", "write", "openat", "clone", "ptrace", "execve", "mmap", "process_vm_readv"} {
		if got := run(t, vm, auditX86_64, uint32(arch.X86_64.SyscallNames[n])); got != retAllow {
			t.Errorf("%s refused: %#x", n, got)
		}
	}
	if _, err := Program("riscv64"); err == nil {
		t.Error("a filter for an architecture without tables")
	}
}

// The program stays short enough for its jumps and quick to run: a
// binary search, not one check per refused call.
func TestProgramSize(t *testing.T) {
	insts, err := Program("amd64")
	if err != nil {
		t.Fatal(err)
	}
	if len(insts) > 320 {
		t.Errorf("%d instructions", len(insts))
	}
	// The longest path: count the instructions run for every call.
	longest := 0
	for nr := uint32(0); nr < 500; nr++ {
		if n := steps(insts, data(auditX86_64, nr, 0)); n > longest {
			longest = n
		}
	}
	if longest > 20 {
		t.Errorf("a call runs %d instructions", longest)
	}
}

// steps counts the instructions a program runs on in (jumps and loads of
// absolute offsets only, as Program's are).
func steps(insts []bpf.Instruction, in []byte) int {
	var a uint32
	for pc, n := 0, 1; pc < len(insts); pc, n = pc+1, n+1 {
		switch ins := insts[pc].(type) {
		case bpf.LoadAbsolute:
			a = binary.BigEndian.Uint32(in[ins.Off:])
		case bpf.Jump:
			pc += int(ins.Skip)
		case bpf.JumpIf:
			ok := false
			switch ins.Cond {
			case bpf.JumpEqual:
				ok = a == ins.Val
			case bpf.JumpGreaterOrEqual:
				ok = a >= ins.Val
			case bpf.JumpBitsSet:
				ok = a&ins.Val != 0
			}
			if ok {
				pc += int(ins.SkipTrue)
			} else {
				pc += int(ins.SkipFalse)
			}
		case bpf.RetConstant:
			return n
		}
	}
	return -1
}

// The assembled filters (go generate) are Program's.
func TestGeneratedPrograms(t *testing.T) {
	for _, goarch := range []string{"amd64", "arm64"} {
		insts, err := Program(goarch)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := bpf.Assemble(insts)
		if err != nil {
			t.Fatal(err)
		}
		if got := programs[goarch]; len(got) != len(raw) || !slices.Equal(got, raw) {
			t.Errorf("%s: zprogram.go is not Program's (go generate ./backend/sandbox/seccomp)", goarch)
		}
	}
}
