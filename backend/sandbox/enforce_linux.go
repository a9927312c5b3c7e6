//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Detect finds what this machine can enforce. probe is a command that exits
// 0 at once (the shim's --sandbox-probe): it is started in a new user and
// network namespace, exactly as a sandboxed agent is, to prove that works.
func Detect(probe []string) Support {
	s := Support{OS: "linux"}
	abi, err := llsys.LandlockGetABIVersion()
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

// Restrict applies g's filesystem rules to this process and everything it
// starts from now on, with Landlock: read and execute everywhere, write only
// in g's folders and a few devices. Files already open (the agent's log,
// its stdout and stderr) stay writable. It fails — it never goes on
// unrestricted — when the kernel has no Landlock; newer Landlock rights the
// kernel lacks are left out (best effort above ABI 1).
func Restrict(g Grants) error {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return fmt.Errorf("%w: the kernel has no Landlock (ABI %d, %v)", ErrUnavailable, abi, err)
	}
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles(writableDevices...).IgnoreIfMissing(),
	}
	if len(g.WriteDirs) > 0 {
		rules = append(rules, landlock.RWDirs(g.WriteDirs...).WithRefer())
	}
	if err := landlock.V7.BestEffort().RestrictPaths(rules...); err != nil {
		return fmt.Errorf("%w: Landlock: %v", ErrUnavailable, err)
	}
	return nil
}
