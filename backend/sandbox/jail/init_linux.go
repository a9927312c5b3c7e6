package jail

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Restrictor applies the Landlock rules of the grants to the calling
// process (package restrict; passed in so that only the shim links it).
type Restrictor func(cfg Config) error

// Init is the life of the box's init, PID 1 inside the box: it reads its
// Config from cfgIn, builds the box, drops every privilege, applies
// restrictor, starts the agent (descriptors 0–2 are its stdin and log),
// reports on report, and waits. When the agent ends it reports how, gives
// what the agent left in the box its grace after SIGTERM, and returns — and
// the kernel kills whatever is still in the box. It returns the exit code
// for the init process.
func Init(cfgIn io.Reader, report io.Writer, restrictor Restrictor) int {
	// One thread for the whole life: its bounding set is the one the agent
	// inherits (see dropPrivileges), and the agent is forked from it.
	runtime.LockOSThread()
	var cfg Config
	dec := json.NewDecoder(cfgIn)
	if err := dec.Decode(&cfg); err != nil {
		fail(report, fmt.Errorf("read the box's configuration: %w", err))
		return 126
	}
	// The box's init lets pass the signals a stop sends to the agent's
	// process group (it is in it): the agent gets them directly, and the
	// init goes when the agent has gone. Caught, not ignored: an ignored
	// signal would stay ignored in the agent across exec (and a shell
	// could not even trap it).
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	go func() {
		for range sigs {
		}
	}()
	if err := buildMounts(cfg); err != nil {
		fail(report, err)
		return 126
	}
	if err := dropPrivileges(); err != nil {
		fail(report, err)
		return 126
	}
	if restrictor != nil {
		if err := restrictor(cfg); err != nil {
			fail(report, err)
			return 126
		}
	}
	_, _ = report.Write(Report{Ready: true}.Encode())
	if cfg.Probe {
		return 0
	}
	// The go-ahead: one byte after the configuration (the decoder may have
	// read it already). A pipe closed first means: start nothing.
	rest := io.MultiReader(dec.Buffered(), cfgIn)
	var b [1]byte
	for {
		if _, err := io.ReadFull(rest, b[:]); err != nil {
			return 0
		}
		if b[0] != '\n' && b[0] != ' ' {
			break
		}
	}
	if b[0] != goByte {
		return 0
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		fail(report, err)
		return 126
	}
	pid, err := syscall.ForkExec(cfg.Path, cfg.Argv, &syscall.ProcAttr{
		Dir:   cfg.Dir,
		Env:   cfg.Env,
		Files: []uintptr{null.Fd(), 1, 2},
		Sys:   &syscall.SysProcAttr{},
	})
	null.Close()
	if err != nil {
		fail(report, fmt.Errorf("fork/exec %s: %w", cfg.Path, err))
		return 127
	}
	_, _ = report.Write(Report{Started: true}.Encode())
	ex := reapUntil(pid)
	_, _ = report.Write(Report{Exit: &ex}.Encode())
	drain(cfg.Grace)
	return 0
}

func fail(report io.Writer, err error) {
	_, _ = report.Write(Report{Error: "SandboxUnavailable: " + err.Error()}.Encode())
}

// reapUntil reaps every process handed to the init until the agent ends,
// and returns how it ended.
func reapUntil(pid int) Exit {
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return Exit{}
		}
		if wpid != pid {
			continue
		}
		switch {
		case ws.Exited():
			c := ws.ExitStatus()
			return Exit{Code: &c}
		case ws.Signaled():
			s := unix.SignalName(ws.Signal())
			if s == "" {
				s = "signal " + strconv.Itoa(int(ws.Signal()))
			}
			return Exit{Signal: s}
		}
	}
}

// drain asks what is left in the box to end (SIGTERM to every process but
// the init) and reaps it for up to grace; the init's own end kills the rest.
func drain(grace time.Duration) {
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
