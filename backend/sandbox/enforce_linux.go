//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// Detect finds what this machine can enforce. probe is a command that exits
// 0 at once (the shim's --sandbox-probe): it is started in a new user and
// network namespace, exactly as a sandboxed agent is, to prove that works.
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
	if len(probe) == 0 {
		s.NetNSError = "no probe to try one with"
		return s
	}
	cmd := exec.Command(probe[0], probe[1:]...)
	cmd.SysProcAttr = ProcAttr(Grants{})
	if out, err := cmd.CombinedOutput(); err != nil {
		s.NetNSError = fmt.Sprintf("cannot create a user and network namespace (%v%s); unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces, or an AppArmor rule)", err, trimOut(out))
	} else {
		s.NetNS = true
	}
	return s
}

func trimOut(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > 200 {
		b = b[:200]
	}
	return ": " + string(b)
}

// ProcAttr is how a sandboxed agent is started: in a process group of its
// own (as every agent) and, without @network, in a new network namespace —
// only a loopback, down, so no route anywhere, the host's own loopback
// services included — inside a new user namespace (what lets an
// unprivileged process make one) that maps the user to itself, so files it
// reads keep their owner.
func ProcAttr(g Grants) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if !g.Network {
		a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	return a
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
