package supervisor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/notify"
	"shepherd/backend/procid"
	"shepherd/backend/shim"
	"shepherd/backend/store"
)

// helloTimeout bounds the wait for the shim to report the agent's pid.
const helloTimeout = 10 * time.Second

// spawn starts rec's command with args under a new shim and returns the run.
// The shim is a session leader; the agent gets a process group of its own,
// stdin from /dev/null, stdout and stderr appended to agent.log.
func (e *Engine) spawn(rec *store.Record, args []string) (*run, error) {
	env := agentEnv(rec)
	path, err := resolveCommand(rec.Command, rec.Cwd, env)
	if err != nil {
		return nil, err
	}
	if err := checkDir(rec.Cwd); err != nil {
		return nil, fmt.Errorf("cwd %v", err)
	}
	exitPath := e.st.ExitPath(rec.ProjectID, rec.ID)
	runPath := e.st.RunPath(rec.ProjectID, rec.ID)
	// A status left by an earlier run must not be taken for this one's.
	for _, p := range []string{exitPath, runPath} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(rec.LogPath), 0o700); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(rec.LogPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	defer logf.Close()

	opts := shim.Options{Path: path, Argv: append([]string{rec.Command}, args...), Dir: rec.Cwd,
		Log: rec.LogPath, ExitFile: exitPath, RunFile: runPath,
		Grace: time.Duration(rec.GraceSec) * time.Second}
	cmd := exec.Command(e.cfg.ShimPath, opts.Args()...)
	cmd.Env = env
	cmd.Dir = rec.Cwd
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.ExtraFiles = []*os.File{pw} // descriptor shim.StatusFD in the shim
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, fmt.Errorf("start shim %s: %w", e.cfg.ShimPath, err)
	}
	// The shim is our child while we live; reap it whenever it ends.
	go func() { _ = cmd.Wait() }()

	status := bufio.NewReader(pr)
	h, err := readHello(pr, status)
	if err != nil {
		pr.Close()
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		return nil, err
	}
	if h.Error != "" {
		pr.Close()
		return nil, errors.New(h.Error)
	}
	rn := &run{pid: h.PID, shimPID: cmd.Process.Pid, exited: make(chan struct{}), status: status, statusFile: pr}
	// The start time is what tells this process from a later one with
	// the same pid; an agent that is already gone has none, and its exit
	// status is read from the shim's file as usual.
	rn.startTime, _ = procid.StartTime(h.PID)
	return rn, nil
}

// readHello reads the shim's first line, within helloTimeout.
func readHello(f *os.File, r *bufio.Reader) (shim.Hello, error) {
	_ = f.SetReadDeadline(time.Now().Add(helloTimeout))
	defer f.SetReadDeadline(time.Time{})
	line, err := r.ReadBytes('\n')
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return shim.Hello{}, fmt.Errorf("shim did not report the agent's pid within %s", helloTimeout)
	}
	if err != nil && len(line) == 0 {
		return shim.Hello{}, fmt.Errorf("shim ended before starting the agent: %w", err)
	}
	var h shim.Hello
	if err := json.Unmarshal(line, &h); err != nil {
		return shim.Hello{}, fmt.Errorf("shim answered %q: %w", strings.TrimSpace(string(line)), err)
	}
	return h, nil
}

// agentEnv is the engine's environment with the agent's own on top, plus
// variables that tell the agent who it is.
func agentEnv(rec *store.Record) []string {
	m := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := m[k]; !ok {
			order = append(order, k)
		}
		m[k] = v
	}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			set(k, v)
		}
	}
	for k, v := range rec.Env {
		set(k, v)
	}
	set("SHEPHERD_AGENT_ID", rec.ID)
	set("SHEPHERD_PROJECT_ID", rec.ProjectID)
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+m[k])
	}
	return out
}

// resolveCommand finds the executable the way a shell would: a name with a
// slash is a path (relative to cwd), any other name is looked up in the
// agent's PATH.
func resolveCommand(command, cwd string, env []string) (string, error) {
	if strings.Contains(command, "/") {
		p := command
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("%s: %w", command, err)
		}
		return p, nil
	}
	pathVar := ""
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			pathVar = kv[5:]
		}
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		p := filepath.Join(dir, command)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", command)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return errors.New("no such file")
		}
		return err
	}
	if fi.IsDir() {
		return errors.New("is a folder")
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return errors.New("permission denied (not executable)")
	}
	return nil
}

// watchExit is layer 1: it waits for the agent's process to end (a pidfd
// or kqueue wakes it at once), then reads the exit status the shim wrote.
func (e *Engine) watchExit(a *agent, rn *run) {
	defer e.watchers.Done()
	if rn.status != nil {
		st, err := readExitLine(e.ctx, rn)
		rn.statusFile.Close()
		if err == nil {
			e.onExit(a, rn, st)
			return
		}
		if e.ctx.Err() != nil {
			return
		}
		// The shim ended without a word (it was killed): fall back to
		// watching the agent itself.
	}
	if err := procid.WaitExit(e.ctx, rn.pid); err != nil {
		return // the engine is closing; the next one re-attaches
	}
	st := e.awaitExitStatus(a, rn)
	e.onExit(a, rn, st)
}

// readExitLine waits for the shim's second line on the status pipe: the
// exit status, sent the moment the shim reaped the agent.
func readExitLine(ctx context.Context, rn *run) (*store.ExitStatus, error) {
	stop := context.AfterFunc(ctx, func() { _ = rn.statusFile.SetReadDeadline(time.Now()) })
	defer stop()
	line, err := rn.status.ReadBytes('\n')
	if err != nil {
		return nil, err
	}
	var st store.ExitStatus
	if err := json.Unmarshal(line, &st); err != nil {
		return nil, fmt.Errorf("shim sent %q: %w", strings.TrimSpace(string(line)), err)
	}
	if st.PID != rn.pid {
		return nil, fmt.Errorf("shim sent the exit of pid %d, not %d", st.PID, rn.pid)
	}
	return &st, nil
}

// awaitExitStatus reads the shim's exit.json for this run. The shim writes
// it right after reaping the agent, so it is usually there within a
// millisecond; if the shim itself is gone without writing it, there is none.
func (e *Engine) awaitExitStatus(a *agent, rn *run) *store.ExitStatus {
	a.mu.Lock()
	path := e.st.ExitPath(a.rec.ProjectID, a.rec.ID)
	a.mu.Unlock()
	deadline := time.Now().Add(3 * time.Second)
	for i := 0; ; i++ {
		st, err := store.ReadExit(path)
		if err == nil && st != nil && st.PID == rn.pid {
			return st
		}
		shimGone := rn.shimPID == 0 || !procid.Alive(rn.shimPID)
		if (shimGone && i > 0) || time.Now().After(deadline) {
			return nil
		}
		if i < 50 {
			time.Sleep(time.Millisecond)
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// onExit records the end of a run the engine saw itself (layer 1). A run
// being stopped is finished by the stopper. Otherwise the run is judged by
// the outcome the engine forced on it (result grace, stale recovery), else —
// for claude-stream-json agents — by its result line when there is one, else
// by its exit code.
func (e *Engine) onExit(a *agent, rn *run, st *store.ExitStatus) {
	sid, _ := rn.scan(a.logPath())
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.run != rn {
		return
	}
	rn.exit = st
	defer close(rn.exited)
	if a.rec.Status != lifecycle.Running {
		return // stopping/killing/timed out: finishStop completes it
	}
	stopTimers(rn)
	now := e.clock.Now().UTC()
	o := rn.forced
	if o == nil {
		o = resultOutcome(rn.result)
	}
	if o == nil {
		o = exitOutcome(st)
	}
	err := e.apply(a, o.status, "exit", func(r *store.Record) {
		r.ExitReason, r.Error = o.reason, o.msg
		if sid != "" {
			r.SessionID = sid
		}
		setExit(r, st, now)
	})
	if err != nil {
		return
	}
	a.run = nil
	s := e.settingsOf(a.rec.ProjectID)
	switch {
	case o.status == lifecycle.Failed && rn.forced == nil:
		e.notifyFailed(a, s)
	case o.status == lifecycle.Completed && s.NotifyCompletion:
		e.notify(notify.Notification{Level: notify.Success, Kind: notify.KindCompleted, Title: "Agent completed",
			ProjectID: a.rec.ProjectID, AgentID: a.rec.ID, Native: s.NotifyNative, Message: "Agent completed: " + a.rec.ID})
	}
	if rn.forced == nil {
		e.scheduleRestart(a)
	}
}

// exitOutcome judges a run by its exit code or signal.
func exitOutcome(st *store.ExitStatus) *outcome {
	switch {
	case st == nil:
		return &outcome{lifecycle.Interrupted, lifecycle.ReasonUnknown,
			"Process ended but its exit status could not be read (its shim was killed)"}
	case st.ExitCode != nil && *st.ExitCode == 0:
		return &outcome{lifecycle.Completed, lifecycle.ReasonCompleted, ""}
	case st.ExitCode != nil:
		return &outcome{lifecycle.Failed, lifecycle.ReasonFailed, fmt.Sprintf("Process exited with code %d", *st.ExitCode)}
	default:
		return &outcome{lifecycle.Failed, lifecycle.ReasonCrashed, fmt.Sprintf("Process was killed by %s", st.Signal)}
	}
}

func (a *agent) logPath() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rec.LogPath
}

func signalGroup(pgid int, sig syscall.Signal) error { return procid.SignalGroup(pgid, sig) }

func isKind(err, kind error) bool { return errors.Is(err, kind) }
