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

// Box is a box being built, or built and waiting to start its agent: the
// thread that holds the box's mount (and network) namespace, dropped
// privileges and Landlock.
type Box struct {
	build chan buildReq
	start chan startReq
	done  chan struct{}
	begun chan error
}

type buildReq struct {
	cfg        Config
	restrictor Restrictor
	ready      chan error
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

// Begin begins a box on a thread of its own, locked to it for the rest of
// its life: it makes the box's mount namespace (and, without network, its
// network namespace) there at once, while the caller makes the box's
// configuration ready; Build then finishes it. The caller must be the shim
// started by ShimAttr. Abort ends a box that will start nothing.
func Begin(network bool) (*Box, error) {
	if err := inBox(); err != nil {
		return nil, fmt.Errorf("SandboxUnavailable: %w", err)
	}
	b := &Box{build: make(chan buildReq), start: make(chan startReq), done: make(chan struct{}), begun: make(chan error, 1)}
	go b.thread(network)
	return b, nil
}

// Build finishes the box for cfg on its thread — the mounts, no capability
// left, no_new_privs, restrictor's Landlock rules — and returns once it is
// ready, or why it could not be built (then nothing runs). cfg.Grants must
// say the same of the network as Begin was told.
func (b *Box) Build(cfg Config, restrictor Restrictor) error {
	if err := <-b.begun; err != nil {
		return fmt.Errorf("SandboxUnavailable: %w", err)
	}
	ready := make(chan error, 1)
	b.build <- buildReq{cfg: cfg, restrictor: restrictor, ready: ready}
	if err := <-ready; err != nil {
		return fmt.Errorf("SandboxUnavailable: %w", err)
	}
	return nil
}

// thread is the box's thread. It never unlocks: when it returns, the Go
// runtime ends the thread (namespaces, privileges and all) rather than run
// anything else on it.
func (b *Box) thread(network bool) {
	runtime.LockOSThread()
	flags, what := unix.CLONE_NEWNS, "mount namespace"
	if !network {
		flags, what = flags|unix.CLONE_NEWNET, "mount and network namespaces"
	}
	if err := unix.Unshare(flags); err != nil {
		b.begun <- fmt.Errorf("cannot create the box's %s: %w", what, err)
		return
	}
	b.begun <- nil
	var req buildReq
	select {
	case req = <-b.build:
	case <-b.done:
		return
	}
	cfg := req.cfg
	if cfg.Grants.Network != network {
		req.ready <- fmt.Errorf("the box was begun with network=%v but its grants say network=%v", network, cfg.Grants.Network)
		return
	}
	if err := finish(cfg, req.restrictor); err != nil {
		req.ready <- err
		return
	}
	req.ready <- nil
	var sr startReq
	select {
	case sr = <-b.start:
	case <-b.done:
		return
	}
	pidfd := -1
	pid, err := syscall.ForkExec(cfg.Path, cfg.Argv, &syscall.ProcAttr{
		Dir:   cfg.Dir,
		Env:   cfg.Env,
		Files: sr.files[:],
		Sys:   &syscall.SysProcAttr{Setpgid: true, PidFD: &pidfd},
	})
	if err != nil {
		sr.reply <- Started{Err: fmt.Errorf("fork/exec %s: %w", cfg.Path, err)}
		return
	}
	sr.reply <- Started{PID: pid, HostPID: pidfd} // HostPID is read by Start
}

// finish makes the rest of the box on the calling (box) thread.
func finish(cfg Config, restrictor Restrictor) error {
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
