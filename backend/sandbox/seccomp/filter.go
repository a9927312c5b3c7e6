package seccomp

import (
	"fmt"
	"slices"
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
// call number (a binary search; for clone and unshare their flags too),
// Denied's calls get
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

// block checks the call number against ds, sorted, by a binary search:
// about ten instructions a call rather than one per refused call (the
// kernel also runs the filter for every call number when it is installed,
// to cache which ones it allows). The searches jump to the block's shared
// returns, which end it: allow, EPERM, ENOSYS, then one test of the flags
// for each call refused only with some.
func block(arch uint32, ds []denial, x32 bool) []bpf.Instruction {
	var flagged []denial
	for _, d := range ds {
		if d.mask != 0 {
			flagged = append(flagged, d)
		}
	}
	code := []insn{{ins: bpf.LoadAbsolute{Off: 0, Size: 4}, to: -1}} // seccomp_data.nr
	if x32 {
		code = append(code, insn{ins: bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32Bit}, to: toENOSYS})
	}
	code = append(code, search(ds, flagged)...)
	rets := len(code)
	b := make([]bpf.Instruction, 0, rets+3+4*len(flagged))
	for i, c := range code {
		if c.to >= 0 {
			j := c.ins.(bpf.JumpIf)
			skip := rets + c.to
			if c.to >= toFlagged {
				skip = rets + 3 + 4*(c.to-toFlagged)
			}
			if skip-i-1 > 255 {
				panic("seccomp: a jump longer than BPF's") // the policy would have to grow tenfold
			}
			j.SkipTrue = uint8(skip - i - 1)
			c.ins = j
		}
		b = append(b, c.ins)
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

// insn is an instruction of a block; a JumpIf with to >= 0 jumps, when
// true, to the block's return to (toAllow, toEPERM, toENOSYS, or the flags
// test toFlagged+k of its k-th flagged call).
type insn struct {
	ins bpf.Instruction
	to  int
}

const (
	toAllow = iota
	toEPERM
	toENOSYS
	toFlagged
)

// search is the code that leads the call number in A to ds's action when
// it is one of them, else to allow.
func search(ds, flagged []denial) []insn {
	if len(ds) <= 4 {
		var b []insn
		for _, d := range ds {
			to := toEPERM
			switch {
			case d.mask != 0:
				to = toFlagged + slices.IndexFunc(flagged, func(f denial) bool { return f.nr == d.nr })
			case d.errno == errENOSYS:
				to = toENOSYS
			}
			b = append(b, insn{ins: bpf.JumpIf{Cond: bpf.JumpEqual, Val: d.nr}, to: to})
		}
		return append(b, insn{ins: bpf.RetConstant{Val: retAllow}, to: -1})
	}
	mid := len(ds) / 2
	hi, lo := search(ds[mid:], flagged), search(ds[:mid], flagged)
	if len(hi) > 255 {
		panic("seccomp: a jump longer than BPF's")
	}
	// A >= ds[mid]: the upper half, which follows; else jump over it.
	return append(append([]insn{{ins: bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: ds[mid].nr, SkipFalse: uint8(len(hi))}, to: -1}}, hi...), lo...)
}
