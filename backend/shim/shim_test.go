package shim

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"shepherd/backend/logtail"
)

var bin string

func TestMain(m *testing.M) {
	dir, _ := os.MkdirTemp("", "shim-test-")
	bin = filepath.Join(dir, "shepherd-shim")
	if out, err := BuildCommand(bin).CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	hello Hello
	exit  map[string]any
	log   string
	file  map[string]any
}

// runShim runs the real shim binary with a status pipe, as the engine does.
func runShim(t *testing.T, path string, argv ...string) result {
	t.Helper()
	dir := t.TempDir()
	o := Options{Path: path, Argv: argv, Dir: dir, Log: filepath.Join(dir, "agent.log"),
		ExitFile: filepath.Join(dir, "exit.json"), RunFile: filepath.Join(dir, "run.json"), Grace: time.Second}
	pr, pw, _ := os.Pipe()
	cmd := exec.Command(bin, o.Args()...)
	cmd.ExtraFiles = []*os.File{pw}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	r := bufio.NewReader(pr)
	var res result
	line, _ := r.ReadBytes('\n')
	if err := json.Unmarshal(line, &res.hello); err != nil {
		t.Fatalf("hello %q: %v", line, err)
	}
	if line, err := r.ReadBytes('\n'); err == nil {
		json.Unmarshal(line, &res.exit)
	}
	if err := cmd.Wait(); err != nil && res.hello.Error == "" {
		t.Fatalf("shim: %v", err)
	}
	b, _ := os.ReadFile(o.Log)
	res.log = string(b)
	if b, err := os.ReadFile(o.ExitFile); err == nil {
		json.Unmarshal(b, &res.file)
	}
	return res
}

func TestExitCodeReachesPipeAndFile(t *testing.T) {
	res := runShim(t, "/bin/sh", "sh", "-c", "echo out; echo err >&2; exit 7")
	if res.hello.PID <= 0 {
		t.Fatalf("hello %+v", res.hello)
	}
	for _, m := range []map[string]any{res.exit, res.file} {
		if m["exitCode"] != float64(7) || m["pid"] != float64(res.hello.PID) || m["exitedAt"] == nil {
			t.Fatalf("exit status %v", m)
		}
	}
	if res.log != "out\nerr\n" {
		t.Fatalf("log %q", res.log)
	}
}

func TestSignalIsReportedAsSignal(t *testing.T) {
	res := runShim(t, "/bin/sh", "sh", "-c", "kill -TERM $$")
	if res.exit["signal"] != "SIGTERM" || res.exit["exitCode"] != nil {
		t.Fatalf("exit %v", res.exit)
	}
}

func TestExecFailureIsReported(t *testing.T) {
	res := runShim(t, "/no/such/binary", "nope")
	if res.hello.PID != 0 || !strings.Contains(res.hello.Error, "no such file") {
		t.Fatalf("hello %+v", res.hello)
	}
}

// The agent must not inherit the status pipe: the engine would otherwise
// never see it close when the shim dies.
func TestAgentDoesNotHoldStatusPipe(t *testing.T) {
	res := runShim(t, "/bin/sh", "sh", "-c", "ls /proc/self/fd")
	fds := strings.Fields(res.log)
	for _, fd := range fds {
		if fd != "0" && fd != "1" && fd != "2" && fd != "3" { // 3 is ls's own directory handle
			t.Fatalf("agent holds descriptor %s (all: %v)", fd, fds)
		}
	}
	if len(fds) > 4 {
		t.Fatalf("agent holds descriptors %v", fds)
	}
}

// The agent writes into a pipe the shim copies into its log, rotated at its
// cap: a flood keeps within the cap and the count of files, every byte is
// counted in the log's offsets, and the agent's last line is in the log by
// the time its end is reported.
func TestOutputIsRotatedAtItsCap(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "agent.log")
	o := Options{Path: "/bin/sh", Argv: []string{"sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo the end"}, Dir: dir,
		Log: log, LogMax: 100000, LogKeep: 2, ExitFile: filepath.Join(dir, "exit.json"), Grace: time.Second}
	pr, pw, _ := os.Pipe()
	cmd := exec.Command(bin, o.Args()...)
	cmd.ExtraFiles = []*os.File{pw}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	r := bufio.NewReader(pr)
	r.ReadBytes('\n') // hello
	if line, err := r.ReadBytes('\n'); err != nil || !strings.Contains(string(line), `"exitCode":0`) {
		t.Fatalf("exit %q %v", line, err)
	}
	// At once, before the shim has ended: the last line is there.
	tail, _, err := logtail.Last(log, 100)
	if err != nil || !strings.HasSuffix(string(tail), "x\nthe end\n") {
		t.Errorf("the agent's last words are not in the log when its end is reported: %q %v", tail, err)
	}
	cmd.Wait()
	files, _ := filepath.Glob(log + "*")
	for _, f := range files {
		if fi, _ := os.Stat(f); fi.Size() > 100000 {
			t.Errorf("%s is %d bytes, over the cap", f, fi.Size())
		}
	}
	if _, err := os.Stat(logtail.Rotated(log, 3)); err == nil {
		t.Errorf("more than 2 rotated files kept: %v", files)
	}
	if got := logtail.Size(log); got != 3000000+1+8 {
		t.Errorf("the log's offsets count %d bytes, want %d", got, 3000000+1+8)
	}
}

// A full disk: the agent is never blocked by its output (the shim drains
// the pipe and drops what it cannot write); its stdout is a blocking pipe.
func TestFullDiskNeverBlocksTheAgent(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	o := Options{Path: "/bin/sh", Argv: []string{"sh", "-c", "grep ^flags /proc/$$/fdinfo/1 > " + filepath.Join(dir, "flags") + "; head -c 20000000 /dev/zero"},
		Dir: dir, Log: "/dev/full", LogMax: 1 << 30, LogKeep: 1, ExitFile: filepath.Join(dir, "exit.json"), Grace: time.Second}
	cmd := exec.Command(bin, o.Args()...)
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the agent blocked on its output to a full disk")
	}
	st, err := ReadExit(o.ExitFile)
	if err != nil || st == nil || st.ExitCode == nil || *st.ExitCode != 0 {
		t.Fatalf("exit %+v %v", st, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "flags"))
	f := strings.Fields(string(b))
	if len(f) != 2 {
		t.Fatalf("flags %q", b)
	}
	if v, err := strconv.ParseInt(f[1], 8, 64); err != nil || v&syscall.O_NONBLOCK != 0 {
		t.Errorf("the agent's stdout is non-blocking (flags %s)", f[1])
	}
}

// startShim starts the real shim for argv with a status pipe and returns
// it with the pipe's reader, once the agent runs (its hello read).
func startShim(t *testing.T, o Options) (*exec.Cmd, *bufio.Reader, Hello) {
	t.Helper()
	pr, pw, _ := os.Pipe()
	cmd := exec.Command(bin, o.Args()...)
	cmd.ExtraFiles = []*os.File{pw}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	t.Cleanup(func() { pr.Close() })
	r := bufio.NewReader(pr)
	line, _ := r.ReadBytes('\n')
	h, err := ParseHello(line)
	if err != nil || h.Error != "" {
		t.Fatalf("hello %q: %v", line, err)
	}
	t.Cleanup(func() {
		syscall.Kill(-h.PID, syscall.SIGKILL)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Error("the shim did not end after its agent was killed")
		}
	})
	return cmd, r, h
}

// What the agent leaves behind and ends while the agent runs is reaped by
// the shim (its subreaper) as it ends, not when the agent does: it never
// lingers as a zombie.
func TestOrphansAreReapedWhileTheAgentRuns(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "orphan")
	o := Options{Path: "/bin/sh", Argv: []string{"sh", "-c", "(sleep 0.2 & echo $! > " + pidFile + ".tmp; mv " + pidFile + ".tmp " + pidFile + "); exec sleep 60"},
		Dir: dir, Log: filepath.Join(dir, "agent.log"), ExitFile: filepath.Join(dir, "exit.json"), Grace: time.Second}
	_, _, _ = startShim(t, o)
	var orphan int
	deadline := time.Now().Add(10 * time.Second)
	for orphan == 0 && time.Now().Before(deadline) {
		b, _ := os.ReadFile(pidFile)
		orphan, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		time.Sleep(5 * time.Millisecond)
	}
	if orphan == 0 {
		t.Fatal("the agent never said its orphan's pid")
	}
	// Gone from /proc means reaped: a zombie keeps its entry.
	for {
		if _, err := os.Stat("/proc/" + strconv.Itoa(orphan)); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(orphan) + "/stat")
			t.Fatalf("the orphan %d was not reaped while the agent runs: %s", orphan, b)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A signal sent to the shim goes to the agent's group; the shim lives on to
// report how the agent took it.
func TestSignalsToTheShimReachTheAgent(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	o := Options{Path: "/bin/sh", Argv: []string{"sh", "-c", `trap 'echo got TERM; exit 3' TERM; touch ` + ready + `; while :; do sleep 0.05; done`},
		Dir: dir, Log: filepath.Join(dir, "agent.log"), ExitFile: filepath.Join(dir, "exit.json"), Grace: time.Second}
	cmd, r, _ := startShim(t, o)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent never set its trap")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	line, err := r.ReadBytes('\n')
	if err != nil {
		t.Fatalf("no exit line: %v", err)
	}
	st, err := ParseExit(line)
	if err != nil || st.ExitCode == nil || *st.ExitCode != 3 {
		t.Fatalf("exit %q %v", line, err)
	}
	if b, _ := os.ReadFile(o.Log); !strings.Contains(string(b), "got TERM") {
		t.Fatalf("log %q", b)
	}
}

// The shim's own runtime settings (RuntimeEnv) are not the agent's; a
// value the agent was given is.
func TestRuntimeEnvIsNotTheAgents(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want string
	}{{nil, "unset"}, {[]string{"GOMAXPROCS=3"}, "3"}} {
		dir := t.TempDir()
		env, own := RuntimeEnv(append(os.Environ(), c.env...))
		o := Options{Path: "/bin/sh", Argv: []string{"sh", "-c", `echo "${GOMAXPROCS-unset}"`}, Dir: dir, Log: filepath.Join(dir, "agent.log"),
			ExitFile: filepath.Join(dir, "exit.json"), Grace: time.Second, OwnEnv: own}
		cmd := exec.Command(bin, o.Args()...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if b, _ := os.ReadFile(o.Log); strings.TrimSpace(string(b)) != c.want {
			t.Errorf("with %v the agent sees GOMAXPROCS %q, want %q", c.env, b, c.want)
		}
	}
}
