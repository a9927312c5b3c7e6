package cli

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"shepherd/backend/api"
	"shepherd/backend/procid"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// A command line comes to a verb, its arguments, the agent's command line
// apart (create's, after -- or after P A) and its flags, wherever they
// stand among the arguments.
func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		pos, tail []string
		flags     map[string]string
		code      int
		err       string
	}{
		{name: "flags after positionals", args: []string{"rm", "p", "a", "--force"}, pos: []string{"p", "a"}, flags: map[string]string{"force": "true"}},
		{name: "flags between", args: []string{"stop", "p", "--grace", "3", "a"}, pos: []string{"p", "a"}, flags: map[string]string{"grace": "3"}},
		{name: "flag=value", args: []string{"stop", "--grace=4", "p", "a"}, pos: []string{"p", "a"}, flags: map[string]string{"grace": "4"}},
		{name: "bool=false", args: []string{"rm", "--force=false", "p", "a"}, pos: []string{"p", "a"}, flags: map[string]string{"force": "false"}},
		{name: "global flag before the verb", args: []string{"--json", "get", "p", "a"}, pos: []string{"p", "a"}, flags: map[string]string{"json": "true"}},
		{name: "global flag after", args: []string{"get", "p", "a", "--show-secrets"}, pos: []string{"p", "a"}, flags: map[string]string{"show-secrets": "true"}},
		{name: "repeated", args: []string{"create", "--env", "A=1", "p", "--env", "B=2", "a", "--", "x"}, pos: []string{"p", "a"}, tail: []string{"x"},
			flags: map[string]string{"env": "A=1,B=2"}},
		{name: "command after --", args: []string{"create", "p", "a", "--grace", "1", "--", "claude", "-p", "--verbose"},
			pos: []string{"p", "a"}, tail: []string{"claude", "-p", "--verbose"}, flags: map[string]string{"grace": "1"}},
		{name: "command without --", args: []string{"create", "p", "--grace", "1", "a", "sleep", "--force", "9"},
			pos: []string{"p", "a"}, tail: []string{"sleep", "--force", "9"}, flags: map[string]string{"grace": "1"}},
		{name: "command without -- after a global flag", args: []string{"--json", "create", "p", "a", "sleep", "-h"},
			pos: []string{"p", "a"}, tail: []string{"sleep", "-h"}, flags: map[string]string{"json": "true"}},
		{name: "-- in the command", args: []string{"create", "p", "a", "sh", "--", "-c"}, pos: []string{"p", "a"}, tail: []string{"sh", "--", "-c"}},
		{name: "a value like a flag", args: []string{"create", "p", "a", "--resume-args", "-p --resume {sessionId}", "--", "x"},
			pos: []string{"p", "a"}, tail: []string{"x"}, flags: map[string]string{"resume-args": "-p --resume {sessionId}"}},
		{name: "-- as terminator without a command", args: []string{"get", "p", "--", "-h"}, pos: []string{"p", "-h"}},
		{name: "one-letter flags", args: []string{"logs", "p", "a", "-fn5"}, pos: []string{"p", "a"}, flags: map[string]string{"follow": "true", "n": "5"}},
		{name: "--f and --n as ever", args: []string{"logs", "--f", "p", "a", "--n", "7"}, pos: []string{"p", "a"}, flags: map[string]string{"follow": "true", "n": "7"}},
		{name: "unknown flag", args: []string{"get", "p", "--frob"}, code: 2, err: "unknown flag --frob"},
		{name: "go-style long flag", args: []string{"rm", "p", "a", "-force"}, code: 2, err: `unknown flag -force — did you mean "--force"?`},
		{name: "missing value", args: []string{"stop", "p", "a", "--grace"}, code: 2, err: "flag --grace needs a value"},
		{name: "bad value", args: []string{"stop", "p", "a", "--grace", "x"}, code: 2, err: `invalid value "x" for flag --grace: want a whole number`},
		{name: "too many", args: []string{"get", "p", "a", "b"}, code: 2, err: "get: wrong number of arguments"},
		{name: "help", args: []string{"get", "p", "-h"}, code: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parse(t, tc.args...)
			if p.code != tc.code || !strings.Contains(p.stderr, tc.err) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", p.code, p.stderr, tc.code, tc.err)
			}
			if tc.code != 0 {
				return
			}
			if tc.name == "help" {
				if p.ran || !strings.HasPrefix(p.stdout, "Usage: shepherd get P A") {
					t.Fatalf("no help: %+v", p)
				}
				return
			}
			flags := map[string]string{} // a repeated flag's values joined by commas
			for _, s := range p.sets {
				if v, ok := flags[s[0]]; ok {
					flags[s[0]] = v + "," + s[1]
				} else {
					flags[s[0]] = s[1]
				}
			}
			want := []any{tc.pos, tc.tail, tc.flags}
			got := []any{p.pos, p.tail, flags}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSplitWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  bool
	}{
		{`--resume {sessionId}`, []string{"--resume", "{sessionId}"}, false},
		{`-p --resume {sessionId} -- "go on"`, []string{"-p", "--resume", "{sessionId}", "--", "go on"}, false},
		{`'a b' "c \"d\"" e\ f`, []string{"a b", `c "d"`, "e f"}, false},
		{`x''`, []string{"x"}, false},
		{`''`, []string{""}, false},
		{"  ", nil, false},
		{`"open`, nil, true},
		{`'open`, nil, true},
	} {
		got, err := splitWords(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("splitWords(%q) error %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("splitWords(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// Whatever is wrong with engine.json — missing, broken, left by a dead
// engine, pointing at a closed port — the answer is the same clear message
// and exit code 1; a wrong token is an error of its own.
func TestNoEngine(t *testing.T) {
	p := isolate(t)
	const msg = "no engine running — start the app or `shepherd serve`"
	fails(t, 1, msg, "projects")
	fails(t, 1, msg, "ls", "demo")

	write := func(info api.EngineInfo) {
		t.Helper()
		if err := api.WriteEngineInfo(p.EngineFile(), info); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.MkdirAll(p.Runtime, 0o700)
	if err := os.WriteFile(p.EngineFile(), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	fails(t, 1, msg, "projects")

	// A pid that is certainly dead: a child that has been reaped.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there any more
	write(api.EngineInfo{URL: url, Token: "t", PID: dead.Process.Pid})
	fails(t, 1, msg, "status")
	write(api.EngineInfo{URL: url, Token: "t", PID: os.Getpid()})
	fails(t, 1, msg, "status")
	fails(t, 1, msg, "logs", "demo", "a", "-f")

	// A live engine that does not know our token.
	s := serve(t, p)
	info, _ := api.ReadEngineInfo(p.EngineFile())
	bad := info
	bad.Token = strings.Repeat("0", 64)
	write(bad)
	fails(t, 1, "bearer token", "projects")
	write(info)
	ok(t, "projects")
	s.stop(t)
	fails(t, 1, msg, "projects")
}

// One engine per data folder: a second serve is refused with a clear error
// while the first one keeps working.
func TestSecondEngineRefused(t *testing.T) {
	p := isolate(t)
	serve(t, p)
	before, _ := os.ReadFile(p.EngineFile())
	r := cli(t, "serve")
	if r.code != 1 || !strings.Contains(r.stderr, "another Shepherd engine is already running on this data folder") ||
		!strings.Contains(r.stderr, "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second serve: %s", r)
	}
	after, _ := os.ReadFile(p.EngineFile())
	if !bytes.Equal(before, after) {
		t.Errorf("the refused engine touched engine.json")
	}
	ok(t, "projects")
}

// serve listens where --listen says, on loopback only; a refused address
// leaves nothing behind (no engine.json, no lock held).
func TestServeListen(t *testing.T) {
	p := isolate(t)
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.168.0.1:8080"} {
		r := cli(t, "serve", "--listen", addr)
		if r.code != 1 || !strings.Contains(r.stderr, "loopback") {
			t.Fatalf("serve --listen %s: %s", addr, r)
		}
	}
	if _, err := os.Stat(p.EngineFile()); !os.IsNotExist(err) {
		t.Fatalf("a refused serve wrote engine.json: %v", err)
	}
	fails(t, 2, "needs a value", "serve", "--listen")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	serve(t, p, "--listen", addr)
	info, _ := api.ReadEngineInfo(p.EngineFile())
	if info.URL != "http://"+addr {
		t.Fatalf("engine.json url %q, want http://%s", info.URL, addr)
	}
	ok(t, "status")
	// The app's own log is written under the XDG state folder.
	b, err := os.ReadFile(p.AppLog())
	if err != nil || !strings.Contains(string(b), "engine API listening") {
		t.Errorf("app log: %v %q", err, b)
	}
}

func TestDefaultShimPath(t *testing.T) {
	t.Setenv(ShimEnv, "/opt/x/shepherd-shim")
	if got := DefaultShimPath(); got != "/opt/x/shepherd-shim" {
		t.Errorf("with $%s: %q", ShimEnv, got)
	}
	t.Setenv(ShimEnv, "")
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	if got, want := DefaultShimPath(), filepath.Join(filepath.Dir(exe), "shepherd-shim"); got != want {
		t.Errorf("DefaultShimPath() = %q, want %q", got, want)
	}
}

// Projects are named by id, name or path; a name two projects share is
// refused with the ids to choose from.
func TestProjectArguments(t *testing.T) {
	p := isolate(t)
	serve(t, p)
	a, b := t.TempDir(), t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	var pa, pb store.Project
	okJSON(t, &pa, "add-project", a, "--name", "twin")
	okJSON(t, &pb, "add-project", b, "--name", "twin")
	for _, arg := range []string{pa.ID, a, a + "/", link} {
		var recs []store.Record
		okJSON(t, &recs, "ls", arg)
		if out := ok(t, "ls", arg); !strings.Contains(out, "No agents in project twin ("+pa.Path+")") {
			t.Errorf("ls %s: %q", arg, out)
		}
	}
	r := fails(t, 1, "project name 'twin' is ambiguous", "ls", "twin")
	if !strings.Contains(r.stderr, pa.ID) || !strings.Contains(r.stderr, pb.ID) {
		t.Errorf("ambiguity error does not list the ids: %s", r.stderr)
	}
	fails(t, 1, "Project 'elsewhere' not found", "ls", "elsewhere")
}

// The engine as a process of its own: SIGTERM ends it cleanly (engine.json
// removed, agents alive); after a SIGKILL its stale engine.json is seen as
// no engine; a new engine re-attaches the agent that lived through both.
func TestServeProcess(t *testing.T) {
	p := isolate(t)
	dir := t.TempDir()
	start := func() (*exec.Cmd, *syncBuf) {
		t.Helper()
		var errb syncBuf
		cmd := exec.Command(os.Args[0], "serve")
		cmd.Env = append(os.Environ(), asCLI+"=1")
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
		})
		deadline := time.Now().Add(15 * time.Second)
		for {
			if info, err := api.ReadEngineInfo(p.EngineFile()); err == nil && info.PID == cmd.Process.Pid {
				return cmd, &errb
			}
			if time.Now().After(deadline) {
				t.Fatalf("serve process wrote no engine.json in 15 s:\n%s", errb.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitEnd := func(cmd *exec.Cmd) int {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Fatal("serve process did not end in 15 s")
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal())
		}
		return cmd.ProcessState.ExitCode()
	}

	eng, errb := start()
	// The start-up message follows engine.json by a moment.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(errb.String(), "listening on http://127.0.0.1:"); {
		if time.Now().After(deadline) {
			t.Errorf("serve stderr: %s", errb.String())
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	ok(t, "add-project", dir, "--name", "demo")
	ok(t, "create", "demo", "long", "--grace", "1", "--", "sleep", "60")
	ok(t, "start", "demo", "long")
	long := record(t, "demo", "long")

	// A second engine process on the same data folder is refused.
	second := exec.Command(os.Args[0], "serve")
	second.Env = append(os.Environ(), asCLI+"=1")
	out, err := second.CombinedOutput()
	if second.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "already running") {
		t.Fatalf("second serve process: %v\n%s", err, out)
	}

	if err := eng.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitEnd(eng); code != 0 {
		t.Fatalf("serve ended with %d after SIGTERM:\n%s", code, errb.String())
	}
	if _, err := os.Stat(p.EngineFile()); !os.IsNotExist(err) {
		t.Errorf("engine.json left after SIGTERM: %v", err)
	}
	if !procid.Alive(long.PID) {
		t.Fatal("the agent died with the engine")
	}

	eng, _ = start()
	var sum supervisor.SyncSummary
	okJSON(t, &sum, "select", "demo")
	if sum.Counts[supervisor.OutcomeReattached] != 1 {
		t.Errorf("select after restart: %+v", sum)
	}
	if err := eng.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitEnd(eng)
	if _, err := os.Stat(p.EngineFile()); err != nil {
		t.Fatalf("engine.json should be left behind by a killed engine: %v", err)
	}
	fails(t, 1, "no engine running", "ls", "demo")
	if !procid.Alive(long.PID) {
		t.Fatal("the agent died with the killed engine")
	}

	// The lock died with the engine: a new one starts, finds the agent.
	eng, _ = start()
	okJSON(t, &sum, "select", "demo")
	if r := record(t, "demo", "long"); r.Status != "running" || r.PID != long.PID {
		t.Fatalf("after a killed engine: %s pid %d, want running pid %d", r.Status, r.PID, long.PID)
	}
	ok(t, "stop", "demo", "long")
	if procid.Alive(long.PID) {
		t.Error("agent alive after stop")
	}
	_ = eng.Process.Signal(syscall.SIGINT)
	if code := waitEnd(eng); code != 0 {
		t.Errorf("serve ended with %d after SIGINT", code)
	}
}

func TestActivityText(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }
	for _, tc := range []struct {
		a    *store.Activity
		want string
	}{
		{nil, ""},
		{&store.Activity{State: "working", Since: at(time.Second)}, "working"},
		{&store.Activity{State: "busy", Tool: "Bash", ToolSince: at(6 * time.Minute)}, "busy · Bash 6 min"},
		{&store.Activity{State: "busy", Tool: "cpu", ToolSince: at(30 * time.Second)}, "busy · using CPU 30 s"},
		{&store.Activity{State: "silent", Since: at(3*time.Minute + 10*time.Second)}, "silent 3 min"},
		{&store.Activity{State: "stale", Since: at(2*time.Hour + 5*time.Minute)}, "stale 2 h 5 min"},
	} {
		if got := activityText(tc.a, now); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.a, got, tc.want)
		}
	}
}
