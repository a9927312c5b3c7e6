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

// Box is a started box: its init's pid (in the caller's PID namespace; the
// leader of the agent's process group) and its report pipe.
type Box struct {
	PID    int
	report *bufio.Reader
	closer io.Closer
}

// Start starts self (the shim's executable) as the init of a new box for
// cfg, with stdin, stdout and stderr the given descriptors, and waits until
// the agent has started in it or the box could not be built (then the error
// says what is missing, and nothing runs). Without @network the box gets a
// network namespace of its own (a loopback only).
func Start(self string, cfg Config, files [3]uintptr) (*Box, error) {
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
	go func() {
		_ = json.NewEncoder(cfgW).Encode(cfg)
		cfgW.Close()
	}()
	b := &Box{PID: pid, report: bufio.NewReader(repR), closer: repR}
	first, err := b.next()
	if err != nil || !first.Started {
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
		repR.Close()
		switch {
		case err != nil:
			return nil, fmt.Errorf("SandboxUnavailable: the box's init ended before it said it was ready (%v, %v)", err, describe(ws))
		case first.Error != "":
			return nil, errors.New(first.Error)
		}
		return nil, errors.New("SandboxUnavailable: the box's init said nothing")
	}
	return b, nil
}

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
