package jail

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Restrictor applies the Landlock rules of the grants to the calling thread
// (package restrict; passed in so that only the shim links it).
type Restrictor func(cfg Config) error

// Box is a built box, waiting to start its agent: the thread that holds
// the box's mount (and network) namespace, dropped privileges and Landlock.
type Box struct {
	start chan startReq
	done  chan struct{}
}

type startReq struct {
	files [3]uintptr
	reply chan Started
}

// Started is an agent started in a box: its pid in the box (for waiting
// and signals from the shim, PID 1 of the box) and on the host (what the
// engine records and signals).
type Started struct {
	PID     int
	HostPID int
	Err     error
}

// Build builds the box for cfg on a thread of its own, locked to it for the
// rest of its life: a mount namespace of its own (and a network namespace of
// its own without @network), the mounts, no capability left, no_new_privs,
// and restrictor's Landlock rules. It returns once the box is ready, or why
// it could not be built (then nothing runs). The caller must be the shim
// started by ShimAttr; HostSockets must have been read before (the box
// thread leaves the host's network). Start runs the agent; Abort ends a box
// that will start nothing.
func Build(cfg Config, restrictor Restrictor) (*Box, error) {
	if err := inBox(); err != nil {
		return nil, fmt.Errorf("SandboxUnavailable: %w", err)
	}
	b := &Box{start: make(chan startReq), done: make(chan struct{})}
	ready := make(chan error, 1)
	go b.thread(cfg, restrictor, ready)
	if err := <-ready; err != nil {
		return nil, fmt.Errorf("SandboxUnavailable: %w", err)
	}
	return b, nil
}

// thread is the box's thread. It never unlocks: when it returns, the Go
// runtime ends the thread (namespaces, privileges and all) rather than run
// anything else on it.
func (b *Box) thread(cfg Config, restrictor Restrictor, ready chan<- error) {
	runtime.LockOSThread()
	if err := b.build(cfg, restrictor); err != nil {
		ready <- err
		return
	}
	ready <- nil
	var req startReq
	select {
	case req = <-b.start:
	case <-b.done:
		return
	}
	var pidfd int = -1
	pid, err := syscall.ForkExec(cfg.Path, cfg.Argv, &syscall.ProcAttr{
		Dir:   cfg.Dir,
		Env:   cfg.Env,
		Files: req.files[:],
		Sys:   &syscall.SysProcAttr{Setpgid: true, PidFD: &pidfd},
	})
	if err != nil {
		req.reply <- Started{Err: fmt.Errorf("fork/exec %s: %w", cfg.Path, err)}
		return
	}
	req.reply <- Started{PID: pid, HostPID: pidfd} // HostPID is read by Start
}

// build makes the box on the calling (locked) thread.
func (b *Box) build(cfg Config, restrictor Restrictor) error {
	flags, what := unix.CLONE_NEWNS, "mount namespace"
	if !cfg.Grants.Network {
		flags, what = flags|unix.CLONE_NEWNET, "mount and network namespaces"
	}
	if err := unix.Unshare(flags); err != nil {
		return fmt.Errorf("cannot create the box's %s: %w", what, err)
	}
	if err := buildMounts(cfg); err != nil {
		return err
	}
	if err := dropPrivileges(); err != nil {
		return err
	}
	if restrictor != nil {
		if err := restrictor(cfg); err != nil {
			return err
		}
	}
	return nil
}

// Start starts the agent from the box's thread, with stdin, stdout and
// stderr the given descriptors, in a process group of its own.
func (b *Box) Start(files [3]uintptr) Started {
	reply := make(chan Started, 1)
	b.start <- startReq{files: files, reply: reply}
	st := <-reply
	if st.Err != nil {
		return st
	}
	pidfd := st.HostPID
	st.HostPID, st.Err = hostPID(pidfd)
	unix.Close(pidfd)
	if st.Err != nil {
		_ = syscall.Kill(st.PID, syscall.SIGKILL)
	}
	return st
}

// Abort ends a box that will start nothing.
func (b *Box) Abort() { close(b.done) }

// hostPID is the pid, in the host's PID namespace, of the process pidfd
// refers to: the "Pid:" of its fdinfo in the host's /proc (which the
// shim's threads other than the box's still see).
func hostPID(pidfd int) (int, error) {
	raw, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(pidfd))
	if err != nil {
		return 0, fmt.Errorf("find the agent's pid on the host: %w", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "Pid:"); ok {
			pid, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || pid <= 0 {
				return 0, fmt.Errorf("find the agent's pid on the host: fdinfo says %q", line)
			}
			return pid, nil
		}
	}
	return 0, errors.New("find the agent's pid on the host: the kernel's pidfd fdinfo has no Pid line")
}

// SelfHostPID is the calling process's pid in the host's PID namespace
// (the shim is PID 1 in its own): what /proc/self, the host's /proc, names.
func SelfHostPID() (int, error) {
	s, err := os.Readlink("/proc/self")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(s)
}

// Drain ends what the agent left in the box: SIGTERM to every process in it
// but the shim, reaping for up to grace; the shim's own end (PID 1 of the
// box) kills whatever is still there.
func Drain(grace time.Duration) {
	if syscall.Kill(-1, syscall.SIGTERM) != nil {
		return // nothing left
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.ECHILD) {
			return
		}
		if wpid <= 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
}
