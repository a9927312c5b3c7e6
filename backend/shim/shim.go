// Package shim is the tiny process that stands between the engine and an
// agent. The engine starts it as a session leader; it starts the agent in a
// process group of its own with stdout and stderr a pipe that it copies into
// agent.log, rotated at its cap (copy.go), reports the agent's pid, and then
// lives to copy and wait: when the agent ends it writes the real exit code
// or signal and the time to exit.json next to the record (atomically),
// stops whatever the agent left in its group, and exits. Because the shim,
// not the engine, is the agent's parent and the reader of its output, the
// engine can crash or quit at any time without the agent dying, blocking on
// a pipe or losing its exit status.
package shim

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"shepherd/backend/logrotate"
	"shepherd/backend/sandbox"
)

// Options are the shim's flags.
type Options struct {
	Path     string        // resolved executable
	Argv     []string      // argv, argv[0] as the user wrote the command
	Dir      string        // working folder
	Log      string        // agent.log, appended
	LogMax   int64         // bytes per log file before it is rotated (≤ 0: never)
	LogKeep  int           // rotated log files kept (agent.log.1 … .N)
	ExitFile string        // exit.json
	RunFile  string        // run.json
	Grace    time.Duration // for what the agent leaves behind
	GoAhead  bool          // wait for the engine's go-ahead (GoFD) before starting
	Sandbox  string        // sandbox.json: run the agent sandboxed by its grants
	Hide     []string      // folders a sandboxed agent must not see (Shepherd's own)
	Sockets  []string      // the host's Unix sockets, covered in a sandboxed agent's box
	// ReadOnly are paths inside the grants a sandboxed agent must not
	// write (sandbox.Protection: git dirs, agent CLI configuration).
	ReadOnly []string
	Limits   sandbox.Limits // a sandboxed agent's box's
	// OwnEnv names variables of the shim's environment that are its own
	// runtime's (RuntimeEnv), not the agent's: the agent starts without them.
	OwnEnv []string
}

// prepared is an agent made ready to start: start waits for the go-ahead
// and starts it, or returns errNoGo when the go-ahead never came (nothing
// is started).
type prepared struct {
	start func() (started, error)
}

// errNoGo: the engine closed the go-ahead pipe (it gave up, or died) before
// it had recorded this shim.
var errNoGo = errors.New("no go-ahead")

// started is an agent the shim started: the pid it waits for and signals
// (in a box, the box's), the agent's and the shim's pids as the engine
// sees them (the host's), and for a boxed agent how what it left in the box
// is ended.
type started struct {
	pid, hostPID, shimPID int
	drain                 func(grace time.Duration)
}

// Args renders o as the shim's command line (without the program name).
func (o Options) Args() []string {
	a := []string{"--path", o.Path, "--dir", o.Dir, "--log", o.Log,
		"--exit", o.ExitFile, "--run", o.RunFile, "--grace", o.Grace.String()}
	if o.LogMax > 0 {
		a = append(a, "--log-max", strconv.FormatInt(o.LogMax, 10), "--log-keep", strconv.Itoa(o.LogKeep))
	}
	if o.GoAhead {
		a = append(a, "--go-ahead")
	}
	for _, n := range o.OwnEnv {
		a = append(a, "--own-env", n)
	}
	if o.Sandbox != "" {
		a = append(a, "--sandbox", o.Sandbox)
	}
	for _, h := range o.Hide {
		a = append(a, "--hide", h)
	}
	for _, s := range o.Sockets {
		a = append(a, "--cover-socket", s)
	}
	if o.Sandbox != "" {
		for _, p := range o.ReadOnly {
			a = append(a, "--read-only", p)
		}
		a = append(a, o.Limits.Args()...)
	}
	a = append(a, "--")
	return append(a, o.Argv...)
}

// Main runs the shim with args (os.Args[1:]) and returns its exit code.
// status is the status pipe (nil when the shim was started without one);
// with --go-ahead, goAhead opens the go-ahead pipe, from which one byte is
// read before anything is started (see GoFD).
func Main(args []string, status io.WriteCloser, goAhead func() io.ReadCloser) int {
	if len(args) > 0 {
		switch args[0] {
		case probeBoxFlag:
			if err := probeBox(args[1:]); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			return 0
		case SandboxProbeFlag:
			// Build a box as for an agent, run nothing in it: the answer is
			// whether that worked, and if not, why.
			self, err := os.Executable()
			var found string
			if err == nil {
				found, err = ProbeSandbox(self)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			if found != "" {
				fmt.Println(found)
			}
			return 0
		}
	}
	var o Options
	fs := flag.NewFlagSet("shepherd-shim", flag.ContinueOnError)
	fs.StringVar(&o.Path, "path", "", "executable")
	fs.StringVar(&o.Dir, "dir", "", "working folder")
	fs.StringVar(&o.Log, "log", "", "log file")
	fs.Int64Var(&o.LogMax, "log-max", 0, "bytes per log file before it is rotated (0: never)")
	fs.IntVar(&o.LogKeep, "log-keep", 0, "rotated log files kept")
	fs.StringVar(&o.ExitFile, "exit", "", "exit status file")
	fs.StringVar(&o.RunFile, "run", "", "run info file")
	fs.DurationVar(&o.Grace, "grace", 10*time.Second, "grace for leftovers")
	fs.BoolVar(&o.GoAhead, "go-ahead", false, "wait for the go-ahead byte on descriptor 4")
	fs.Func("own-env", "a variable of the shim's environment the agent does not get (repeatable)", func(v string) error {
		o.OwnEnv = append(o.OwnEnv, v)
		return nil
	})
	fs.StringVar(&o.Sandbox, "sandbox", "", "sandbox.json: run the agent sandboxed by its grants")
	fs.Func("hide", "a folder a sandboxed agent must not see (repeatable)", func(v string) error {
		o.Hide = append(o.Hide, v)
		return nil
	})
	fs.Func("cover-socket", "a host Unix socket a sandboxed agent must not reach (repeatable)", func(v string) error {
		o.Sockets = append(o.Sockets, v)
		return nil
	})
	fs.Func("read-only", "a path in a grant a sandboxed agent must not write (repeatable)", func(v string) error {
		if !filepath.IsAbs(v) || filepath.Clean(v) != v {
			return fmt.Errorf("not an absolute clean path: %q", v)
		}
		o.ReadOnly = append(o.ReadOnly, v)
		return nil
	})
	fs.IntVar(&o.Limits.Processes, "max-processes", 0, "a sandboxed agent's box's task limit (0: none)")
	fs.IntVar(&o.Limits.MemoryMiB, "memory-mib", 0, "a sandboxed agent's box's memory limit in MiB (0: none)")
	fs.IntVar(&o.Limits.ShmMiB, "shm-mib", 0, "a sandboxed agent's box's /dev/shm size in MiB (0: the kernel's default)")
	fs.BoolVar(&o.Limits.Cgroup, "limits-cgroup", false, "the box was started in a cgroup that holds its limits")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.Limits.Processes < 0 || o.Limits.MemoryMiB < 0 || o.Limits.ShmMiB < 0 {
		fmt.Fprintln(os.Stderr, "shepherd-shim: a negative limit")
		return 2
	}
	o.Argv = fs.Args()
	if o.Path == "" || o.Log == "" || o.ExitFile == "" || len(o.Argv) == 0 {
		fmt.Fprintln(os.Stderr, "shepherd-shim: usage: shepherd-shim --path P --log F --exit F [--run F] [--dir D] [--grace G] [--go-ahead] -- argv...")
		return 2
	}
	if status == nil {
		status = nopCloser{io.Discard}
	}
	// waitGo waits for the engine's go-ahead; false when the engine closed
	// the pipe (it gave up, or died) before it had recorded this shim: then
	// nothing is started.
	waitGo := func() bool {
		if !o.GoAhead {
			return true
		}
		var b [1]byte
		err := errors.New("no go-ahead pipe")
		if r := goAhead(); r != nil {
			_, err = io.ReadFull(r, b[:])
			r.Close()
		}
		return err == nil
	}
	return run(o, status, waitGo)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// send writes a status line (Hello or ExitStatus).
func send(w io.Writer, v interface{ append([]byte) []byte }) {
	_, _ = w.Write(append(v.append(make([]byte, 0, 128)), '\n'))
}

// finishCopy bounds the wait for the output pipe's end once the agent and
// what it left behind are gone.
const finishCopy = 2 * time.Second

func run(o Options, status io.WriteCloser, waitGo func() bool) int {
	defer status.Close()
	logw, err := logrotate.Open(o.Log, o.LogMax, o.LogKeep)
	if err != nil {
		send(status, Hello{Error: err.Error()})
		return 127
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		send(status, Hello{Error: err.Error()})
		return 127
	}
	// The agent's stdout and stderr: the write end of a pipe the shim
	// copies into the log. Both ends are close-on-exec here; the agent gets
	// the write end as its descriptors 1 and 2.
	pr, pw, err := os.Pipe()
	if err != nil {
		send(status, Hello{Error: err.Error()})
		return 127
	}
	// run.json's temporary file is made now, while the engine writes its
	// record: making a file is the slow part of writing one, and the
	// engine waits for the hello, which follows run.json.
	runFile := prepareFile(o.RunFile)
	defer runFile.discard()
	// What can be made ready before the go-ahead is, first (a sandboxed
	// agent's box is built meanwhile: its cost overlaps the engine's record
	// write and the rest of the shim's setup). Nothing starts before that
	// setup is done.
	setup := make(chan struct{})
	prep, err := prepareAgent(o, null, pw, func() bool { <-setup; return waitGo() })
	becomeSubreaper()
	closeInheritedOnExec()
	// Signals sent to the shim (its session was hung up, someone sent it
	// TERM) are passed on to the agent's group rather than ending the shim,
	// which must outlive the agent to record how it ended. SIGCHLD says a
	// child ended: the agent, or an orphan handed to the shim. Asked for
	// before anything is started, so that no end is missed.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGCHLD)
	if o.Sandbox != "" {
		absorbFatalSignals()
	}
	close(setup)
	if err != nil {
		null.Close()
		pr.Close()
		pw.Close()
		logw.Close()
		if waitGo() {
			send(status, Hello{Error: err.Error()})
			return 127
		}
		status.Close()
		return 0
	}
	ag, err := prep.start()
	pid := ag.pid
	null.Close()
	pw.Close() // the agent holds it now: the pipe ends when its last holder does
	if err != nil {
		pr.Close()
		logw.Close()
		if errors.Is(err, errNoGo) {
			status.Close()
			return 0
		}
		send(status, Hello{Error: err.Error()})
		return 127
	}
	out := startCopy(pr, logw)
	started := time.Now()
	runFile.write(RunInfo{PID: ag.hostPID, ShimPID: ag.shimPID, StartedAt: started}.append(nil))
	send(status, Hello{PID: ag.hostPID})

	st := waitAgent(pid, sigs)
	st.PID = ag.hostPID
	go forward(sigs, pid)
	if ag.drain != nil {
		// A boxed agent's end is reported once nothing it left in the box
		// lives: a stop means gone.
		ag.drain(o.Grace)
	}
	// What the agent wrote before it ended is in its log before its end is
	// reported: the engine reads the log's last lines (a result line) then.
	out.flush()
	send(status, st)
	_ = status.Close()
	_ = writeFile(o.ExitFile, st.append(nil))
	if ag.drain == nil {
		cleanup(pid, o.Grace)
	}
	out.finish(finishCopy)
	return 0
}

// waitAgent reaps the shim's children as they end (SIGCHLD) until the
// agent itself has; orphans that the kernel hands to the shim (it is a
// subreaper) are reaped on the way so they never linger as zombies. Other
// signals are passed on to the agent's group. Nothing here holds a thread
// while it waits.
func waitAgent(pid int, sigs <-chan os.Signal) ExitStatus {
	for {
		if st, done := reapUntil(pid); done {
			return st
		}
		if s := <-sigs; s != syscall.SIGCHLD {
			_ = syscall.Kill(-pid, s.(syscall.Signal))
		}
	}
}

// forward passes the signals the shim gets on to the agent's group once
// the agent has ended (to what it left behind).
func forward(sigs <-chan os.Signal, pid int) {
	for s := range sigs {
		if s != syscall.SIGCHLD {
			_ = syscall.Kill(-pid, s.(syscall.Signal))
		}
	}
}

// reapUntil reaps every child that has ended, without waiting; done once
// the agent was among them (its status), or the shim has no child left.
func reapUntil(pid int) (ExitStatus, bool) {
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			// ECHILD: the agent is not ours to wait for any more.
			return ExitStatus{PID: pid, ExitedAt: time.Now()}, true
		case wpid == 0:
			return ExitStatus{}, false
		case wpid != pid:
			continue
		}
		st := ExitStatus{PID: pid, ExitedAt: time.Now()}
		switch {
		case ws.Exited():
			c := ws.ExitStatus()
			st.ExitCode = &c
		case ws.Signaled():
			st.Signal = unix.SignalName(ws.Signal())
			if st.Signal == "" {
				st.Signal = "signal " + strconv.Itoa(int(ws.Signal()))
			}
		}
		return st, true
	}
}

// cleanup stops what the agent left behind: its process group, and (on
// Linux) any descendant that was handed to the shim. TERM first, KILL after
// the grace, reaping as it goes.
func cleanup(pgid int, grace time.Duration) {
	if !leftovers(pgid) {
		return
	}
	signalAll(pgid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		reapNoHang()
		if !leftovers(pgid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := 0; i < 500; i++ {
		signalAll(pgid, syscall.SIGKILL)
		reapNoHang()
		if !leftovers(pgid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func signalAll(pgid int, sig syscall.Signal) {
	_ = syscall.Kill(-pgid, sig)
	for _, c := range children() {
		_ = syscall.Kill(c, sig)
	}
}

func leftovers(pgid int) bool {
	reapNoHang()
	if err := syscall.Kill(-pgid, 0); err == nil {
		return true
	}
	return len(children()) > 0
}

func reapNoHang() {
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if wpid <= 0 || err != nil {
			return
		}
	}
}

// closeListedOnExec marks every descriptor from 3 up that /dev/fd lists
// close-on-exec.
func closeListedOnExec() {
	ents, err := os.ReadDir("/dev/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
