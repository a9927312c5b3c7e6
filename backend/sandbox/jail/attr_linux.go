package jail

import (
	"fmt"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ShimAttr is how the engine starts a sandboxed agent's shim: in a session
// of its own, as PID 1 of new user, PID, IPC and UTS namespaces, and without
// network (the agent has no @network) in a new network namespace too — the
// whole shim, so that nothing of the host's network shows through the
// box's PID 1 (/proc/1/net) either. The user
// namespace maps the user to itself (files keep their owner), without
// setgroups. A user who is not root keeps, across the exec, the two
// capabilities (over the box's own namespaces only) the shim needs to build
// the box on the agent's thread: CAP_SYS_ADMIN for its namespaces and
// mounts, CAP_SETPCAP to empty the bounding set; the agent gets none.
func ShimAttr(network bool) *syscall.SysProcAttr {
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS)
	if !network {
		flags |= syscall.CLONE_NEWNET
	}
	return &syscall.SysProcAttr{
		Setsid:                     true,
		Cloneflags:                 flags,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
		AmbientCaps:                []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP},
	}
}

// inBox says why the calling process is not a shim started by ShimAttr:
// PID 1 of its own PID namespace, in a user namespace that maps one user.
// A box is never built anywhere else (a root shim in the host's namespaces
// could build one, but its agent would outlive a stop).
func inBox() error {
	if os.Getpid() != 1 {
		return fmt.Errorf("the shim was not started in the box's namespaces (it is not PID 1 of its own PID namespace)")
	}
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return fmt.Errorf("read the shim's user mapping: %w", err)
	}
	if f := strings.Fields(string(b)); len(f) != 3 || f[2] != "1" {
		return fmt.Errorf("the shim was not started in a user namespace of its own (uid_map %q)", strings.TrimSpace(string(b)))
	}
	return nil
}

// ownNetwork says whether the calling thread's network namespace is one the
// box made (owned by the box's user namespace), not the host's.
func ownNetwork() (bool, error) {
	netns, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, err
	}
	defer unix.Close(netns)
	owner, err := unix.IoctlRetInt(netns, unix.NS_GET_USERNS)
	if err != nil {
		return false, err
	}
	defer unix.Close(owner)
	var a, b unix.Stat_t
	if err := unix.Fstat(owner, &a); err != nil {
		return false, err
	}
	if err := unix.Stat("/proc/thread-self/ns/user", &b); err != nil {
		return false, err
	}
	return a.Dev == b.Dev && a.Ino == b.Ino, nil
}
