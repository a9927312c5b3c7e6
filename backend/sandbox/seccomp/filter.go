package seccomp

import (
	"fmt"
	"sort"

	"golang.org/x/net/bpf"
)

// Audit architectures (linux/audit.h) and the x32 ABI's bit.
const (
	auditX86_64  = 0xc000003e
	auditI386    = 0x40000003
	auditAARCH64 = 0xc00000b7
	auditARM     = 0x40000028
	x32Bit       = 0x40000000
)

// Filter results (linux/seccomp.h).
const (
	retAllow = 0x7fff0000
	retErrno = 0x00050000
)

// arches are the audit architectures a process of goarch can make system
// calls in: its own, and the 32-bit one its kernel may also run (i386 code
// through int 0x80 on x86-64, AArch32 on arm64) — filtered too, or a call
// refused in one would pass in the other.
func arches(goarch string) (native, compat uint32, err error) {
	switch goarch {
	case "amd64":
		return auditX86_64, auditI386, nil
	case "arm64":
		return auditAARCH64, auditARM, nil
	}
	return 0, 0, fmt.Errorf("no seccomp filter for %s (amd64 and arm64 have one)", goarch)
}

type denial struct{ nr, errno, mask uint32 }

// denials are Denied's calls on arch, by number.
func denials(arch uint32) []denial {
	nums := sysnum[arch]
	var out []denial
	for _, r := range Denied {
		for _, n := range r.Names {
			if nr, ok := nums[n]; ok {
				out = append(out, denial{nr, r.Errno, r.FlagMask})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].nr < out[j].nr })
	return out
}

// Program is the filter for a process of goarch: by architecture, then by
// call number (and for clone and unshare their flags), Denied's calls get
// their errno and every other call is allowed; calls of the x32 ABI and of
// any other architecture get ENOSYS. The result of every other call
// depends on its number only, so the kernel's filter cache keeps allowed
// calls from running it again.
func Program(goarch string) ([]bpf.Instruction, error) {
	native, compat, err := arches(goarch)
	if err != nil {
		return nil, err
	}
	nb := block(native, denials(native), native == auditX86_64)
	cb := block(compat, denials(compat), false)
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: native, SkipFalse: 1},
		bpf.Jump{Skip: 3},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: compat, SkipFalse: 1},
		bpf.Jump{Skip: uint32(1 + len(nb))},
		bpf.RetConstant{Val: retErrno | errENOSYS},
	}
	prog = append(prog, nb...)
	return append(prog, cb...), nil
}

// block checks the call number against ds; it ends in its own returns,
// then the checks of the flags of the calls refused only for some (each
// ends in its own returns too).
func block(arch uint32, ds []denial, x32 bool) []bpf.Instruction {
	var plain, flagged []denial
	for _, d := range ds {
		if d.mask != 0 {
			flagged = append(flagged, d)
		} else {
			plain = append(plain, d)
		}
	}
	b := []bpf.Instruction{bpf.LoadAbsolute{Off: 0, Size: 4}} // seccomp_data.nr
	checks := len(plain) + len(flagged)
	if x32 {
		checks++
	}
	// Layout: the checks, then allow, EPERM, ENOSYS, then per flagged
	// call: load its first argument, test the mask, its two returns.
	allowAt := 1 + checks
	retAt := func(errno uint32) int {
		if errno == errENOSYS {
			return allowAt + 2
		}
		return allowAt + 1
	}
	skip := func(from, to int) uint8 { return uint8(to - from - 1) }
	if x32 {
		b = append(b, bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32Bit, SkipTrue: skip(len(b), retAt(errENOSYS))})
	}
	for _, d := range plain {
		b = append(b, bpf.JumpIf{Cond: bpf.JumpEqual, Val: d.nr, SkipTrue: skip(len(b), retAt(d.errno))})
	}
	for i, d := range flagged {
		b = append(b, bpf.JumpIf{Cond: bpf.JumpEqual, Val: d.nr, SkipTrue: skip(len(b), allowAt+3+4*i)})
	}
	b = append(b, bpf.RetConstant{Val: retAllow}, bpf.RetConstant{Val: retErrno | errEPERM},
		bpf.RetConstant{Val: retErrno | errENOSYS})
	for _, d := range flagged {
		// The low half of seccomp_data.args[0] (little-endian machines).
		b = append(b, bpf.LoadAbsolute{Off: 16, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: d.mask, SkipFalse: 1},
			bpf.RetConstant{Val: retErrno | d.errno}, bpf.RetConstant{Val: retAllow})
	}
	return b
}
