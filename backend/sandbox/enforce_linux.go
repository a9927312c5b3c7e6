//go:build linux

package sandbox

import (
	"fmt"
	"os/exec"
	"strings"

	"golang.org/x/sys/unix"
)

// Detect finds what this machine can enforce. probe is the shim's
// --sandbox-probe: it builds a box exactly as for an agent without @network
// (user, mount, PID, IPC and network namespaces, the read-only re-mount,
// Landlock) and runs nothing in it, proving that all of it works here.
func Detect(probe []string) Support {
	s := Support{OS: "linux"}
	abi, err := LandlockABI()
	switch {
	case err != nil:
		s.LandlockError = fmt.Sprintf("the kernel has no Landlock (%v); it needs Linux 5.13 or newer with landlock in its lsm= list", err)
	case abi < 1:
		s.LandlockError = fmt.Sprintf("the kernel reports Landlock ABI %d", abi)
	default:
		s.Landlock, s.LandlockABI = true, abi
	}
	if base, why := DetectCgroup(); base != "" {
		s.Limits, s.CgroupBase = LimitsCgroup, base
		SweepCgroups(base) // boxes gone while no engine ran
	} else {
		s.Limits, s.LimitsNote = LimitsRlimit, why
	}
	if len(probe) == 0 {
		s.NetNSError = "no probe to try one with"
		return s
	}
	cmd := exec.Command(probe[0], probe[1:]...)
	if out, err := cmd.CombinedOutput(); err != nil {
		s.NetNSError = fmt.Sprintf("cannot build the sandbox's box (%v%s); if it is the namespaces, unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces, or an AppArmor rule)", err, trimOut(out))
	} else {
		s.NetNS = true
		s.PIDLimit = strings.Contains(string(out), ProbePIDLimit)
	}
	return s
}

// ProbePIDLimit is what the probe prints when the kernel took a PID limit
// for the box's PID namespace (Linux 6.14 and newer).
const ProbePIDLimit = "pid-limit: yes"

func trimOut(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > 300 {
		b = b[:300]
	}
	return ": " + strings.TrimSpace(string(b))
}

// LandlockABI is the kernel's Landlock ABI version (an error when it has
// none). A plain syscall: the engine asks it without linking the library
// that enforces the rules (package restrict, the shim's).
func LandlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, errno
	}
	return int(v), nil
}

// BoxTmp is a sandboxed agent's TMPDIR: the box's private /dev/shm, empty at start and gone with the box.
const BoxTmp = "/dev/shm"
