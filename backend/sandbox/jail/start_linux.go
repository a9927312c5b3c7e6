package jail

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// InitFlag starts the shim's executable as the box's init (see Init): its
// config pipe is descriptor 4, its report pipe descriptor 3.
const InitFlag = "--sandbox-init"

// Descriptors of the init's pipes.
const (
	ReportFD = 3
	ConfigFD = 4
)

// HostSockets lists the host's pathname Unix sockets, to be covered in the
// box. Read from outside the box: inside a new network namespace the list
// is empty.
func HostSockets() []string {
	f, err := os.Open("/proc/self/net/unix")
	if err != nil {
		return nil
	}
	defer f.Close()
	return ParseUnixSockets(f)
}

// Box is a box: its init's pid (in the caller's PID namespace; the leader
// of the agent's process group), its report pipe, and the config pipe on
// which the go-ahead to start the agent is sent.
type Box struct {
	PID    int
	report *bufio.Reader
	closer io.Closer
	cfgW   *os.File
}

// Prepare starts self (the shim's executable) as the init of a new box for
// cfg, with stdin, stdout and stderr the given descriptors, and waits until
// the box is built — namespaces, mounts, privileges dropped, Landlock — or
// could not be (then the error says what is missing, and nothing runs). The
// agent is not started until Run. Without @network the box gets a network
// namespace of its own (a loopback only).
func Prepare(self string, cfg Config, files [3]uintptr) (*Box, error) {
	repR, repW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		repR.Close()
		repW.Close()
		return nil, err
	}
	pid, err := syscall.ForkExec(self, []string{"shepherd-shim", InitFlag}, &syscall.ProcAttr{
		Dir: "/",
		// One P: the init mostly waits, and the Go runtime of a fresh
		// process then starts with fewer threads (and does not read the
		// cgroup to size itself), which a start pays for.
		Env:   []string{"GOMAXPROCS=1"},
		Files: []uintptr{files[0], files[1], files[2], repW.Fd(), cfgR.Fd()},
		Sys:   procAttr(cfg.Grants.Network),
	})
	repW.Close()
	cfgR.Close()
	if err != nil {
		repR.Close()
		cfgW.Close()
		return nil, fmt.Errorf("SandboxUnavailable: cannot create the box's namespaces (user, mount, PID, IPC%s): %v", netWord(cfg.Grants.Network), err)
	}
	b := &Box{PID: pid, report: bufio.NewReader(repR), closer: repR, cfgW: cfgW}
	if err := json.NewEncoder(cfgW).Encode(cfg); err != nil {
		b.Abort()
		return nil, fmt.Errorf("SandboxUnavailable: hand the box its configuration: %v", err)
	}
	if err := b.expect(func(r Report) bool { return r.Ready }); err != nil {
		return nil, err
	}
	return b, nil
}

// Run starts the agent in a prepared box and waits until it has started.
func (b *Box) Run() error {
	_, err := b.cfgW.Write([]byte{goByte})
	b.cfgW.Close()
	if err != nil {
		b.Abort()
		return fmt.Errorf("SandboxUnavailable: the box's init is gone: %v", err)
	}
	return b.expect(func(r Report) bool { return r.Started })
}

// Abort ends a box whose agent was not started, or a probe's.
func (b *Box) Abort() {
	b.cfgW.Close()
	_ = syscall.Kill(b.PID, syscall.SIGKILL)
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(b.PID, &ws, 0, nil)
	b.closer.Close()
}

// expect reads the init's next report; anything but what ok wants ends the
// box with the init's own words.
func (b *Box) expect(ok func(Report) bool) error {
	r, err := b.next()
	if err == nil && ok(r) {
		return nil
	}
	var ws syscall.WaitStatus
	_ = syscall.Kill(b.PID, syscall.SIGKILL)
	_, _ = syscall.Wait4(b.PID, &ws, 0, nil)
	b.cfgW.Close()
	b.closer.Close()
	switch {
	case err != nil:
		return fmt.Errorf("SandboxUnavailable: the box's init ended before it said it was ready (%v, %v)", err, describe(ws))
	case r.Error != "":
		return errors.New(r.Error)
	}
	return errors.New("SandboxUnavailable: the box's init said something unexpected")
}

// goByte is the go-ahead the init waits for before it starts the agent.
const goByte = 'g'

// Exit reads how the agent ended, once the init has gone; nil when it did
// not say (it was killed first: then its own end is the agent's).
func (b *Box) Exit() *Exit {
	defer b.closer.Close()
	for {
		r, err := b.next()
		if err != nil {
			return nil
		}
		if r.Exit != nil {
			return r.Exit
		}
	}
}

func (b *Box) next() (Report, error) {
	line, err := b.report.ReadBytes('\n')
	if err != nil {
		return Report{}, err
	}
	var r Report
	if err := json.Unmarshal(line, &r); err != nil {
		return Report{}, err
	}
	return r, nil
}

func describe(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "killed by " + ws.Signal().String()
	}
	return fmt.Sprintf("exit code %d", ws.ExitStatus())
}

func netWord(network bool) string {
	if network {
		return ""
	}
	return ", network"
}

// procAttr makes the box's namespaces. The user namespace maps the user to
// itself (files keep their owner), without setgroups; the init leads a
// process group of its own (the agent's, which a stop signals); and it is
// killed if the shim dies, which takes the whole box with it.
func procAttr(network bool) *syscall.SysProcAttr {
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS)
	if !network {
		flags |= syscall.CLONE_NEWNET
	}
	return &syscall.SysProcAttr{
		Cloneflags:                 flags,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
		Setpgid:                    true,
		Pdeathsig:                  syscall.SIGKILL,
		// Kept across the exec of the init when the user is not root (a
		// non-root uid loses its capabilities on exec otherwise): the
		// mounts need CAP_SYS_ADMIN, dropping the bounding set CAP_SETPCAP —
		// both only over the box's own namespaces. The init drops them.
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP},
	}
}
