package bootstrap

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"

	"shepherd/backend/api"
	"shepherd/backend/hosts"
	"shepherd/backend/hosts/hostkeys"
	"shepherd/backend/hosts/internal/sshtest"
	"shepherd/backend/hosts/sshconfig"
	"shepherd/backend/hosts/sshconn"
	"shepherd/backend/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	sshtest.RemoveEngines()
	os.Exit(code)
}

// host is a "remote" machine: an SSH server in the test whose commands run
// here, as this user, with a home folder of their own.
type host struct {
	srv     *sshtest.Server
	home    string // the host user's HOME
	runtime string // its XDG_RUNTIME_DIR
	bin     string // a folder first on its PATH, for stand-in commands
	conn    *sshconn.Conn
}

func newHost(t *testing.T) *host {
	t.Helper()
	root := t.TempDir()
	h := &host{home: filepath.Join(root, "home"), runtime: filepath.Join(root, "run"), bin: filepath.Join(root, "bin")}
	for _, d := range []string{h.home, h.runtime, h.bin} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// The client side: its own ~/.ssh, a key the host takes.
	local := t.TempDir()
	if err := os.MkdirAll(filepath.Join(local, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, _ := ssh.MarshalPrivateKey(priv, "")
	if err := os.WriteFile(filepath.Join(local, ".ssh", "id_ed25519"), pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	pub, _ := ssh.NewPublicKey(priv.Public())
	h.srv = sshtest.New(t, pub)
	h.srv.Dir = h.home
	h.srv.Env = []string{"HOME=" + h.home, "XDG_RUNTIME_DIR=" + h.runtime, "PATH=" + h.bin + ":" + os.Getenv("PATH"), "USER=" + os.Getenv("USER"), "LANG=C"}
	db := &hostkeys.DB{User: []string{filepath.Join(local, ".ssh", "known_hosts")}}
	if err := db.Accept(h.srv.Addr, h.srv.HostKey.PublicKey()); err != nil {
		t.Fatal(err)
	}
	c, err := sshconn.Dial(context.Background(), h.srv.Addr, sshconn.Options{
		Env: sshconfig.Env{Home: local, LocalUser: "me", SystemConfig: "-"}, AgentSocket: "none"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	h.conn = c
	// Whatever engine the host's engine.json names at the end (a test
	// that failed half-way) is ended too.
	t.Cleanup(func() {
		b, err := os.ReadFile(filepath.Join(h.runtime, "shepherd", "engine.json"))
		var info socketInfo
		if err == nil && json.Unmarshal(b, &info) == nil && info.Socket != "" && info.PID > 0 && info.PID != os.Getpid() {
			stopPID(info.PID)
		}
	})
	return h
}

func stopPID(pid int) {
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// standIn puts a command named name on the host's PATH.
func (h *host) standIn(t *testing.T, name, script string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h.bin, name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// client is the API client of the host's engine, over the SSH connection.
func (h *host) client(e Engine) *api.Client {
	return &api.Client{BaseURL: hosts.BaseURL, Token: e.Token, HTTP: hosts.HTTPClient(h.conn.Transport(e.Endpoint))}
}

// reap ends an engine the test started (by its pid) when the test ends,
// and the agents of the host's data folder.
func (h *host) reap(t *testing.T, pid int) {
	t.Cleanup(func() { stopPID(pid) })
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// tcpListeners counts the TCP sockets process pid listens on (Linux).
func tcpListeners(t *testing.T, pid int) int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Skip("no /proc:", err)
	}
	mine := map[string]bool{}
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && strings.HasPrefix(l, "socket:[") {
			mine[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	n := 0
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) > 9 && fields[3] == "0A" && mine[fields[9]] {
				n++
			}
		}
	}
	return n
}

// The whole bootstrap against a host on this machine: the engine and the
// shim installed into the host user's folder, the engine started detached
// on a Unix socket (0600, no TCP), its API answering over the SSH
// connection; a second Ensure reuses it; a new build replaces it while an
// agent it supervises keeps running and is re-attached by the new engine.
func TestEnsureInstallStartUpgrade(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the test host is this machine: Linux")
	}
	h := newHost(t)
	ctx := context.Background()
	v1 := Builds{Dir: sshtest.Engines(t, "hosts-test-1"), Version: "hosts-test-1"}
	var steps []string
	began := time.Now()
	e1, err := Ensure(ctx, h.conn, Options{Builds: v1, Progress: func(s string) { steps = append(steps, s) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first Ensure (install over SFTP and start): %v", time.Since(began))
	h.reap(t, e1.PID)
	if !e1.Started || e1.Upgraded || e1.Via != "setsid" || !strings.HasPrefix(e1.Version, "hosts-test-1-") {
		t.Fatalf("first Ensure: %+v", e1)
	}
	if len(steps) < 3 {
		t.Errorf("progress: %q", steps)
	}
	wantDir := filepath.Join(h.home, ".local/lib/shepherd/engines", e1.Version)
	if e1.Dir != wantDir || e1.Endpoint != filepath.Join(h.runtime, "shepherd", "engine.sock") {
		t.Fatalf("installed in %s, socket %s", e1.Dir, e1.Endpoint)
	}
	for p, want := range map[string]os.FileMode{
		wantDir: 0o700, filepath.Join(wantDir, EngineFile): 0o755, filepath.Join(wantDir, ShimFile): 0o755,
		e1.Endpoint: 0o600, filepath.Join(h.runtime, "shepherd", "engine.json"): 0o600,
	} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %v", p, fi.Mode(), err, want)
		}
	}
	left, _ := filepath.Glob(filepath.Join(wantDir, ".*.tmp-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %q", left)
	}
	// Detached: a session of its own, outliving the SSH session that
	// started it (that session has ended: the API answers below).
	if sid, err := unix.Getsid(e1.PID); err != nil || sid != e1.PID {
		t.Errorf("engine pid %d is in session %d (%v), want its own", e1.PID, sid, err)
	}
	if n := tcpListeners(t, e1.PID); n != 0 {
		t.Fatalf("the host's engine listens on %d TCP sockets", n)
	}
	c := h.client(e1)
	var st api.EngineStatus
	if _, err := c.JSON(ctx, "GET", "/v1/engine", nil, &st); err != nil || st.Version != "hosts-test-1" || st.PID != e1.PID {
		t.Fatalf("GET /v1/engine over SSH: %+v %v", st, err)
	}
	// Through the socket with a wrong token: refused.
	bad := &api.Client{BaseURL: hosts.BaseURL, Token: strings.Repeat("0", 64), HTTP: c.HTTP}
	var apiErr *api.Error
	if _, err := bad.JSON(ctx, "GET", "/v1/engine", nil, &st); !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized {
		t.Fatalf("a wrong token: %v", err)
	}

	// Again: the running engine of this build is kept.
	began = time.Now()
	again, err := Ensure(ctx, h.conn, Options{Builds: v1})
	t.Logf("Ensure of a running engine of this build: %v", time.Since(began))
	if err != nil || again.Started || again.PID != e1.PID || again.Token != e1.Token {
		t.Fatalf("second Ensure: %+v %v", again, err)
	}

	// An agent under the first engine.
	proj := t.TempDir()
	var p store.Project
	if _, err := c.JSON(ctx, "POST", "/v1/projects", map[string]string{"path": proj}, &p); err != nil {
		t.Fatal(err)
	}
	if _, err := c.JSON(ctx, "POST", "/v1/projects/"+p.ID+"/agents", map[string]any{"id": "long", "command": "sleep", "args": []string{"300"}, "graceSec": 1}, nil); err != nil {
		t.Fatal(err)
	}
	var rec store.Record
	if _, err := c.JSON(ctx, "POST", "/v1/projects/"+p.ID+"/agents/long/start", nil, &rec); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if rec.PID > 0 {
			_ = syscall.Kill(-rec.PID, syscall.SIGKILL)
			_ = syscall.Kill(rec.PID, syscall.SIGKILL)
		}
	})
	if rec.PID <= 0 || !alive(rec.PID) {
		t.Fatalf("agent not running: %+v", rec)
	}

	// A new build: the old engine is stopped, the agent lives on, and the
	// new engine has it.
	v2 := Builds{Dir: sshtest.Engines(t, "hosts-test-2"), Version: "hosts-test-2"}
	began = time.Now()
	e2, err := Ensure(ctx, h.conn, Options{Builds: v2})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Ensure with an upgrade (install, stop, start): %v", time.Since(began))
	h.reap(t, e2.PID)
	if !e2.Started || !e2.Upgraded || e2.PID == e1.PID || e2.Token == e1.Token || !strings.HasPrefix(e2.Version, "hosts-test-2-") {
		t.Fatalf("upgrade: %+v", e2)
	}
	if alive(e1.PID) {
		t.Fatalf("the old engine (pid %d) still runs", e1.PID)
	}
	if !alive(rec.PID) {
		t.Fatalf("the agent (pid %d) died with the upgrade", rec.PID)
	}
	c2 := h.client(e2)
	if _, err := c2.JSON(ctx, "GET", "/v1/engine", nil, &st); err != nil || st.Version != "hosts-test-2" {
		t.Fatalf("the new engine: %+v %v", st, err)
	}
	var after store.Record
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := c2.JSON(ctx, "GET", "/v1/projects/"+p.ID+"/agents/long", nil, &after); err == nil && after.Status == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new engine does not have the agent running: %+v", after)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if after.PID != rec.PID {
		t.Fatalf("agent pid %d after the upgrade, was %d", after.PID, rec.PID)
	}
	if _, err := os.Stat(e1.Dir); !os.IsNotExist(err) {
		t.Errorf("the old build %s was not removed: %v", e1.Dir, err)
	}
	if h.srv.Connections() != 1 {
		t.Errorf("%d SSH connections, want 1", h.srv.Connections())
	}
}

// A host whose OS or architecture has no build: "needs a newer engine",
// and nothing is copied to it.
func TestEnsureNoBuildForPlatform(t *testing.T) {
	h := newHost(t)
	h.standIn(t, "uname", `echo "Linux riscv64"`)
	b := Builds{Dir: sshtest.Engines(t, "hosts-test-1"), Version: "hosts-test-1"}
	_, err := Ensure(context.Background(), h.conn, Options{Builds: b})
	if !errors.Is(err, ErrNoBuild) || !strings.Contains(err.Error(), "linux/riscv64") || !strings.Contains(err.Error(), runtime.GOOS+"/"+runtime.GOARCH) {
		t.Fatalf("Ensure on riscv64: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.home, ".local")); !os.IsNotExist(err) {
		t.Fatalf("something was installed: %v", err)
	}
	if h.srv.Sessions() != 1 {
		t.Fatalf("%d sessions, want 1 (the look at the host)", h.srv.Sessions())
	}
}

// Where the user's systemd manager answers and lingers, the engine is a
// transient user service (systemd-run --user) that leaves its agents
// running when it stops (KillMode=process). The stand-ins record what
// was asked and start it as systemd would, outside the session.
func TestEnsureSystemdRun(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the test host is this machine: Linux")
	}
	h := newHost(t)
	args := filepath.Join(h.home, "systemd-run.args")
	h.standIn(t, "systemctl", "exit 0\n")
	h.standIn(t, "loginctl", "echo yes\n")
	h.standIn(t, "systemd-run", `printf '%s\n' "$@" > `+args+`
while [ $# -gt 0 ]; do
  case "$1" in
    --setenv=*) export "${1#--setenv=}" ;;
    -p) shift ;;
    -*) ;;
    *) break ;;
  esac
  shift
done
setsid "$@" </dev/null >/dev/null 2>&1 &
`)
	b := Builds{Dir: sshtest.Engines(t, "hosts-test-1"), Version: "hosts-test-1"}
	e, err := Ensure(context.Background(), h.conn, Options{Builds: b})
	if err != nil {
		t.Fatal(err)
	}
	h.reap(t, e.PID)
	got, _ := os.ReadFile(args)
	for _, want := range []string{"--user\n", "--collect\n", "-p\nKillMode=process\n", "--setenv=XDG_RUNTIME_DIR=" + h.runtime + "\n",
		"--setenv=SHEPHERD_SHIM=" + filepath.Join(e.Dir, ShimFile) + "\n", filepath.Join(e.Dir, EngineFile) + "\nserve\n--socket\n"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("systemd-run was not given %q:\n%s", want, got)
		}
	}
	if e.Via != "systemd-run" || !e.Started {
		t.Fatalf("%+v", e)
	}
	var st api.EngineStatus
	if _, err := h.client(e).JSON(context.Background(), "GET", "/v1/engine", nil, &st); err != nil || st.PID != e.PID {
		t.Fatalf("GET /v1/engine: %+v %v", st, err)
	}
}

// An engine on TCP (a window, or serve without --socket) already owns the
// host's data: refused with what to do, not fought over.
func TestEnsureForeignEngine(t *testing.T) {
	h := newHost(t)
	dir := filepath.Join(h.runtime, "shepherd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	info := `{"url":"http://127.0.0.1:4000","token":"x","pid":` + strconv.Itoa(os.Getpid()) + `}`
	if err := os.WriteFile(filepath.Join(dir, "engine.json"), []byte(info), 0o600); err != nil {
		t.Fatal(err)
	}
	b := Builds{Dir: sshtest.Engines(t, "hosts-test-1"), Version: "hosts-test-1"}
	_, err := Ensure(context.Background(), h.conn, Options{Builds: b})
	if !errors.Is(err, ErrForeignEngine) || !strings.Contains(err.Error(), "http://127.0.0.1:4000") {
		t.Fatalf("Ensure with a TCP engine on the host: %v", err)
	}
}

// Without XDG_RUNTIME_DIR the engine's runtime folder is the user's own,
// never a shared /tmp name.
func TestRuntimeFallback(t *testing.T) {
	p, err := parseProbe("uname=Linux x86_64\nhome=/home/ann\nruntime=\nuid=1000\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.runtimeBase(); got != "/home/ann/.local/state/shepherd-runtime" {
		t.Fatalf("runtime base %q", got)
	}
	p, _ = parseProbe("uname=Linux x86_64\nhome=/home/ann\nruntime=/run/user/1000\nusermanager=yes\nlinger=no\n")
	if p.runtimeBase() != "/run/user/1000" || !p.userManager || p.linger {
		t.Fatalf("%+v", p)
	}
	for _, bad := range []string{"", "home=/x\n", "uname=Linux x86_64\nhome=relative\n"} {
		if _, err := parseProbe(bad); err == nil {
			t.Errorf("parseProbe(%q) took it", bad)
		}
	}
}

func TestParseUname(t *testing.T) {
	for in, want := range map[string]string{
		"Linux x86_64\n": "linux/amd64", "Linux aarch64": "linux/arm64", "Darwin arm64": "darwin/arm64",
		"Darwin x86_64": "darwin/amd64", "Linux riscv64": "linux/riscv64", "FreeBSD amd64": "freebsd/amd64",
	} {
		p, err := ParseUname(in)
		if err != nil || p.String() != want {
			t.Errorf("ParseUname(%q) = %v, %v; want %s", in, p, err, want)
		}
	}
	for _, bad := range []string{"", "Linux", "Linux x86_64 extra", "Linux ../x", "Lin/ux x"} {
		if p, err := ParseUname(bad); err == nil {
			t.Errorf("ParseUname(%q) = %v", bad, p)
		}
	}
}

func FuzzParseUname(f *testing.F) {
	for _, s := range []string{"Linux x86_64", "Darwin arm64", "a b", "../.. x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseUname(s)
		if err != nil {
			return
		}
		// It names a folder of the builds: nothing that leaves it.
		if p.OS == "" || p.Arch == "" || strings.ContainsAny(p.String()[len(p.OS)+1:]+p.OS, "/\\. \n") {
			t.Fatalf("ParseUname(%q) = %+v", s, p)
		}
	})
}

func FuzzParseProbe(f *testing.F) {
	f.Add("uname=Linux x86_64\nhome=/home/ann\nruntime=/run/user/1\nusermanager=yes\nlinger=yes\n")
	f.Add("home=/\nuname=x y\nruntime=rel\n")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parseProbe(s)
		if err != nil {
			return
		}
		if !strings.HasPrefix(p.home, "/") || !strings.HasPrefix(p.runtimeBase(), "/") || strings.Contains(p.runtimeBase(), "\n") {
			t.Fatalf("parseProbe(%q) = %+v", s, p)
		}
	})
}

func TestQuote(t *testing.T) {
	for _, s := range []string{"plain", "it's", "$(rm -rf /)", "a b\nc", `\'"`} {
		out, err := runSh(t, "printf '%s' "+quote(s))
		if err != nil || out != s {
			t.Errorf("quote(%q) read back as %q (%v)", s, out, err)
		}
	}
}

func runSh(t *testing.T, script string) (string, error) {
	t.Helper()
	out, err := exec.Command("/bin/sh", "-c", script).Output()
	return string(out), err
}

func TestIsEngine(t *testing.T) {
	p := "/Users/Ann Lee/.local/lib/shepherd/engines/v1-abc/shepherd-engine"
	for args, want := range map[string]bool{
		p + " serve --socket":            true,
		p + "x serve --socket":           false,
		"/other/shepherd-engine serve":   false,
		p + " list":                      false,
		"":                               false,
		"sh -c " + p + " serve --socket": false,
	} {
		if got := isEngine(args, p); got != want {
			t.Errorf("isEngine(%q) = %v", args, got)
		}
	}
}
