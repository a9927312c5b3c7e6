package shim

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
