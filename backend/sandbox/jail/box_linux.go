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

	"shepherd/backend/sandbox"
)

// Locks are applied last on the box's thread: Landlock's rules of the
// grants (package restrict) and the seccomp filter (package seccomp),
// passed in so that only the shim links them. Both are needed.
type Locks struct {
	Landlock func(cfg Config) error
	Seccomp  func() error
}

// Box is a box being built on a thread of its own, which then starts its
// agent: the thread that holds the box's mount (and network) namespace,
// dropped privileges and Landlock.
type Box struct {
	result chan Started
}

// Started is how a box's start ended: the agent's pid in the box (for
// waiting and signals from the shim, PID 1 of the box) and on the host
// (what the engine records and signals); or NoGo (the go-ahead never came:
// nothing was started); or why the box could not be built (also with NoGo)
// or the agent started (then nothing runs).
type Started struct {
	PID     int
	HostPID int
	NoGo    bool
	Err     error

	pidfd int // the agent's, from its start until Wait reads HostPID
}

// Begin builds the box for cfg on a thread of its own, locked to it for the
// rest of its life, while the caller goes on: a mount namespace of its own
// (without @network, the shim is already in the box's own network), the mounts, no
// capability left, no_new_privs, the locks (Landlock, then a new session
// keyring and the seccomp filter). The thread
// then waits for goAhead (false: start nothing) and starts the agent with
// stdin, stdout and stderr the given descriptors, in a process group of
// its own. Wait says how that ended. The caller must be the shim started by
// ShimAttr(cfg.Grants.Network), and cfg.Sockets read on the host's network
// (HostSockets, by the engine).
func Begin(cfg Config, locks Locks, goAhead func() bool, files [3]uintptr) *Box {
	b := &Box{result: make(chan Started, 1)}
	go func() { b.result <- b.thread(cfg, locks, goAhead, files) }()
	return b
}

// Wait waits until the agent is started (or why it was not) and finds its
// pid on the host.
func (b *Box) Wait() Started {
	st := <-b.result
	if st.Err != nil || st.NoGo {
		return st
	}
	st.HostPID, st.Err = hostPID(st.pidfd)
	unix.Close(st.pidfd)
	if st.Err != nil {
		_ = syscall.Kill(st.PID, syscall.SIGKILL)
	}
	return st
}

// thread is the box's thread. It never unlocks: when it returns, the Go
// runtime ends the thread (namespaces, privileges and all) rather than run
// anything else on it. A box that could not be built still waits for the
// go-ahead before it says so (the engine hears of a start's failure only
// once it has recorded the start).
func (b *Box) thread(cfg Config, locks Locks, goAhead func() bool, files [3]uintptr) Started {
	runtime.LockOSThread()
	err := build(cfg, locks)
	if err != nil {
		err = fmt.Errorf("SandboxUnavailable: %w", err)
	}
	if !goAhead() {
		return Started{NoGo: true, Err: err}
	}
	if err != nil {
		return Started{Err: err}
	}
	pidfd := -1
	pid, err := syscall.ForkExec(cfg.Path, cfg.Argv, &syscall.ProcAttr{
		Dir:   cfg.Dir,
		Env:   cfg.Env,
		Files: files[:],
		Sys:   &syscall.SysProcAttr{Setpgid: true, PidFD: &pidfd},
	})
	if err != nil {
		return Started{Err: fmt.Errorf("fork/exec %s: %w", cfg.Path, err)}
	}
	return Started{PID: pid, pidfd: pidfd}
}

// build makes the box on the calling (box) thread.
func build(cfg Config, locks Locks) error {
	if err := inBox(); err != nil {
		return err
	}
	if locks.Landlock == nil || locks.Seccomp == nil {
		return errors.New("this shim was built without Landlock or the seccomp filter")
	}
	// The nested repositories are searched for while the box is built (on
	// another thread, in the host's mounts, which the box's copy of them
	// matches), and kept read-only with the rest.
	scanned := make(chan []string, 1)
	if cfg.ScanRepos {
		go func() { scanned <- sandbox.FindRepos(cfg.Grants.WriteDirs, sandbox.DefaultScan).Paths }()
	} else {
		scanned <- nil
	}
	readOnly := func() []string {
		return sandbox.WithTargets(append(append([]string{}, cfg.ReadOnly...), <-scanned...), cfg.Grants.WriteDirs)
	}
	if err := applyLimits(cfg.Limits); err != nil {
		return err
	}
	if !cfg.Grants.Network {
		own, err := ownNetwork()
		if err != nil {
			return fmt.Errorf("cannot tell the box's network from the host's: %w", err)
		}
		if !own {
			return fmt.Errorf("the shim was started on the host's network, but the agent has no @network")
		}
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("cannot create the box's mount namespace: %w", err)
	}
	if err := buildMounts(cfg, readOnly); err != nil {
		return err
	}
	if err := dropPrivileges(); err != nil {
		return err
	}
	if err := locks.Landlock(cfg); err != nil {
		return err
	}
	// A session keyring of the box's own, empty: the user's (the engine's)
	// keys are not the box's. Joined on this thread only, before the
	// filter refuses the keyring's calls.
	if _, _, e := unix.RawSyscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); e != 0 {
		return fmt.Errorf("join a new session keyring: %w", e)
	}
	if err := locks.Seccomp(); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

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
// but the shim (PID 1 of the box), reaping for up to grace, then SIGKILL to
// what is left, reaped too: when it returns, nothing else lives in the box.
func Drain(grace time.Duration) {
	if syscall.Kill(-1, syscall.SIGTERM) != nil {
		return // nothing left
	}
	if reapAll(time.Now().Add(grace)) {
		return
	}
	_ = syscall.Kill(-1, syscall.SIGKILL)
	reapAll(time.Now().Add(5 * time.Second))
}

// reapAll reaps the shim's children until none is left (true) or the
// deadline.
func reapAll(deadline time.Time) bool {
	for time.Now().Before(deadline) {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.ECHILD) {
			return true
		}
		if wpid <= 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	return false
}
