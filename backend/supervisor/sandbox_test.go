package supervisor

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/sandbox"
	"shepherd/internal/testutil"
)

// These tests run sandboxed agents for real: Landlock and a network
// namespace on this kernel. They need both; a machine without them fails
// here rather than passing on an unsandboxed run.

func requireSandbox(t *testing.T, h *harness) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the kernel sandbox is tested on Linux")
	}
	if s := h.e.SandboxSupport(); !s.Full() {
		t.Fatalf("this machine cannot sandbox: %s", s.Summary())
	}
}

func perms(tags ...string) *[]string {
	t := append([]string{}, tags...) // [] in JSON, not null
	return &t
}

// listeners opens a TCP and a UDP listener on 127.0.0.1 and reports what
// reaches them.
type listeners struct {
	tcp, udp string
	tcpConns chan struct{}
	udpPkts  chan struct{}
}

func listen(t *testing.T) *listeners {
	t.Helper()
	l := &listeners{tcpConns: make(chan struct{}, 16), udpPkts: make(chan struct{}, 16)}
	tl, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ul, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tl.Close(); ul.Close() })
	l.tcp, l.udp = tl.Addr().String(), ul.LocalAddr().String()
	go func() {
		for {
			c, err := tl.Accept()
			if err != nil {
				return
			}
			c.Close()
			l.tcpConns <- struct{}{}
		}
	}()
	go func() {
		buf := make([]byte, 1500)
		for {
			if _, _, err := ul.ReadFrom(buf); err != nil {
				return
			}
			l.udpPkts <- struct{}{}
		}
	}()
	return l
}

// runProbe creates and starts a sbprobe agent with ops and returns its log
// once it has ended.
func runProbe(t *testing.T, h *harness, id string, p *[]string, ops ...string) string {
	t.Helper()
	h.create(AgentSpec{ID: id, Command: sbProbe, Args: ops, Permissions: p})
	h.start(id)
	r := h.waitStatus(id, lifecycle.Completed)
	b, err := os.ReadFile(r.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantLine(t *testing.T, log, prefix string, errWords ...string) {
	t.Helper()
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, prefix) {
			for _, w := range errWords {
				if !strings.Contains(line, w) {
					t.Errorf("line %q: want %q in it", line, w)
				}
			}
			return
		}
	}
	t.Errorf("no line starting %q in the log:\n%s", prefix, log)
}

func TestSandboxBaselineNoWritesNoNetwork(t *testing.T) {
	h := newHarness(t)
	requireSandbox(t, h)
	l := listen(t)
	cwdFile := filepath.Join(h.project.Path, "written-by-agent")
	log := runProbe(t, h, "boxed", perms(),
		"write:"+cwdFile, "read:/etc/hostname", "tcp:"+l.tcp, "udp:"+l.udp, "dns:"+l.udp)

	wantLine(t, log, "FAIL write:", "read-only file system")
	wantLine(t, log, "OK read:/etc/hostname")
	wantLine(t, log, "FAIL tcp:", "unreachable")
	wantLine(t, log, "FAIL udp:", "unreachable")
	wantLine(t, log, "FAIL dns:")
	if _, err := os.Stat(cwdFile); !os.IsNotExist(err) {
		t.Errorf("the sandboxed agent wrote %s (stat: %v)", cwdFile, err)
	}
	// What it printed reached its log: its own log stays writable.
	if !strings.Contains(log, "OK read:") {
		t.Errorf("log %q", log)
	}
	// Nothing reached the host's loopback services: each try above failed
	// at once inside the agent (the listeners are drained here, not waited on).
	select {
	case <-l.tcpConns:
		t.Error("a TCP connection from the sandbox reached the host")
	case <-l.udpPkts:
		t.Error("a datagram from the sandbox reached the host")
	default:
	}
	r := h.get("boxed")
	if r.Sandbox == nil || r.Sandbox.Network || len(r.Sandbox.WriteDirs) != 0 {
		t.Fatalf("record's sandbox %+v", r.Sandbox)
	}
	fi, err := os.Stat(h.e.Store().SandboxPath(h.project.ID, "boxed"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("sandbox.json: %v %v", fi, err)
	}
	g, err := sandbox.Load(h.e.Store().SandboxPath(h.project.ID, "boxed"))
	if err != nil || g.Network || len(g.WriteDirs) != 0 {
		t.Fatalf("sandbox.json %+v %v", g, err)
	}
}

func TestSandboxGrantsWriteAndNetwork(t *testing.T) {
	h := newHarness(t)
	requireSandbox(t, h)
	l := listen(t)
	out := filepath.Join(h.project.Path, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	log := runProbe(t, h, "granted", perms("@write:"+out, "@network", "@read:*"),
		"write:"+filepath.Join(out, "ok.txt"), "write:"+filepath.Join(h.project.Path, "up.txt"),
		"tcp:"+l.tcp, "dns:"+l.udp)
	wantLine(t, log, "OK write:"+filepath.Join(out, "ok.txt"))
	wantLine(t, log, "FAIL write:"+filepath.Join(h.project.Path, "up.txt"), "read-only file system")
	wantLine(t, log, "OK tcp:")
	select {
	case <-l.tcpConns:
	case <-time.After(5 * time.Second):
		t.Fatal("the granted TCP connection never arrived")
	}
	select {
	case <-l.udpPkts: // the DNS query reached the stand-in server
	case <-time.After(5 * time.Second):
		t.Fatal("the granted DNS query never arrived")
	}
	if b, err := os.ReadFile(filepath.Join(out, "ok.txt")); err != nil || string(b) != "written\n" {
		t.Fatalf("granted write: %q %v", b, err)
	}
	r := h.get("granted")
	if want := []string{"@write:" + out, "@network", "@read:*"}; strings.Join(r.Sandbox.Permissions, " ") != strings.Join(want, " ") {
		t.Fatalf("permissions %v, want %v", r.Sandbox.Permissions, want)
	}
}

func TestSandboxHoldsGrandchildren(t *testing.T) {
	h := newHarness(t)
	requireSandbox(t, h)
	target := filepath.Join(h.project.Path, "grandchild")
	h.create(AgentSpec{ID: "nested", Command: "/bin/sh", Permissions: perms(),
		Args: []string{"-c", `sh -c "sh -c 'touch ` + target + `'"; echo "rc=$?"`}})
	h.start("nested")
	r := h.waitStatus("nested", lifecycle.Completed)
	b, _ := os.ReadFile(r.LogPath)
	if !strings.Contains(string(b), "Read-only file system") || !strings.Contains(string(b), "rc=1") {
		t.Fatalf("log %q", b)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("a grandchild of the sandboxed agent wrote %s", target)
	}
}

func TestSandboxBadTagsNamed(t *testing.T) {
	h := newHarness(t)
	file := filepath.Join(h.project.Path, "a-file")
	writeFile(t, file)
	for _, c := range []struct{ tag, words string }{
		{"@net", `"@net": unknown tag`},
		{"@write:relative/dir", `"@write:relative/dir": the folder must be an absolute path`},
		{"@write:/no/such/folder", `"@write:/no/such/folder": /no/such/folder does not exist`},
		{"@write:" + file, "is not a folder"},
		{"@write:", "needs an absolute folder"},
		{"", "an empty tag"},
	} {
		_, err := h.e.CreateAgent(h.project.ID, AgentSpec{ID: "bad", Command: "/bin/true", Permissions: perms(c.tag)})
		wantKind(t, err, ErrValidation, c.words)
		if _, err := h.e.GetAgent(h.project.ID, "bad"); err == nil {
			t.Fatalf("tag %q: the agent was created", c.tag)
		}
		if _, err := os.Stat(h.e.Store().AgentDir(h.project.ID, "bad")); !os.IsNotExist(err) {
			t.Fatalf("tag %q: the agent's folder was written", c.tag)
		}
	}
}

func TestSandboxCallerGrantsAtMostItsOwn(t *testing.T) {
	h := newHarness(t)
	sub := filepath.Join(h.project.Path, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	h.create(AgentSpec{ID: "parent", Command: "/bin/true"})                      // unsandboxed: network + its cwd
	h.create(AgentSpec{ID: "boxed", Command: "/bin/true", Permissions: perms()}) // holds nothing
	caller := func(id string) *AgentRef { return &AgentRef{ProjectID: h.project.ID, AgentID: id} }

	// Within the unsandboxed parent's own: its network, its cwd and below.
	r, err := h.e.CreateAgent(h.project.ID, AgentSpec{ID: "ok", Command: "/bin/true", Caller: caller("parent"),
		Permissions: perms("@network", "@write:"+sub)})
	if err != nil || r.Sandbox == nil || !r.Sandbox.Network {
		t.Fatalf("within the caller's grants: %+v %v", r, err)
	}
	// What an agent creates is sandboxed even when it asks for nothing.
	r, err = h.e.CreateAgent(h.project.ID, AgentSpec{ID: "default", Command: "/bin/true", Caller: caller("parent")})
	if err != nil || r.Sandbox == nil || r.Sandbox.Network || len(r.Sandbox.WriteDirs) != 0 {
		t.Fatalf("created by an agent without permissions: %+v %v", r.Sandbox, err)
	}
	for _, c := range []struct {
		caller, tag, words string
	}{
		{"parent", "@write:" + other, "cannot grant @write:" + other},
		{"parent", "@write:/", "cannot grant @write:/"},
		{"boxed", "@network", "cannot grant @network"},
		{"boxed", "@write:" + sub, "cannot grant @write:" + sub},
		{"ghost", "@network", "not known to this engine"},
	} {
		_, err := h.e.CreateAgent(h.project.ID, AgentSpec{ID: "denied", Command: "/bin/true", Caller: caller(c.caller),
			Permissions: perms(c.tag)})
		wantKind(t, err, ErrPermissionDenied, c.words)
		if _, err := h.e.GetAgent(h.project.ID, "denied"); err == nil {
			t.Fatalf("%s granting %s: created", c.caller, c.tag)
		}
	}
	// The user holds everything.
	if _, err := h.e.CreateAgent(h.project.ID, AgentSpec{ID: "user", Command: "/bin/true", Permissions: perms("@write:/")}); err != nil {
		t.Fatal(err)
	}
}

func TestSandboxUnavailableStartsNothing(t *testing.T) {
	noLandlock := func(c *Config) {
		c.SandboxProbe = func() sandbox.Support {
			return sandbox.Support{OS: "linux", LandlockError: "test: no Landlock here", NetNS: true}
		}
	}
	h := newHarness(t, noLandlock)
	h.create(AgentSpec{ID: "boxed", Command: "/bin/sh", Args: []string{"-c", "echo ran"}, Permissions: perms("@network")})
	h.create(AgentSpec{ID: "plain", Command: "/bin/sh", Args: []string{"-c", "echo ran"}})
	_, err := h.e.StartAgent(context.Background(), h.project.ID, "boxed")
	wantKind(t, err, ErrSandboxUnavailable, "Landlock")
	r := h.get("boxed")
	if r.Status != lifecycle.NotStarted || r.ShimPID != 0 || r.PID != 0 || !strings.Contains(r.Error, "test: no Landlock here") {
		t.Fatalf("after an unavailable sandbox: %+v", r)
	}
	if b, _ := os.ReadFile(r.LogPath); strings.Contains(string(b), "ran") {
		t.Fatal("the agent ran unsandboxed")
	}
	// An agent that is not sandboxed starts as ever.
	h.start("plain")
	h.waitStatus("plain", lifecycle.Completed)

	// No namespaces: no sandboxed agent starts, with or without @network
	// (never a weaker sandbox in silence).
	noNetNS := func(c *Config) {
		c.SandboxProbe = func() sandbox.Support {
			return sandbox.Support{OS: "linux", Landlock: true, LandlockABI: 7, NetNSError: "test: user namespaces are off"}
		}
	}
	h2 := newHarness(t, noNetNS)
	h2.create(AgentSpec{ID: "offline", Command: "/bin/true", Permissions: perms()})
	_, err = h2.e.StartAgent(context.Background(), h2.project.ID, "offline")
	wantKind(t, err, ErrSandboxUnavailable, "namespaces")
	h2.create(AgentSpec{ID: "online", Command: "/bin/true", Permissions: perms("@network")})
	_, err = h2.e.StartAgent(context.Background(), h2.project.ID, "online")
	wantKind(t, err, ErrSandboxUnavailable, "namespaces")
}

// The shim enforces sandbox.json, not the engine's memory: an agent whose
// grants file is gone does not start unsandboxed.
func TestSandboxShimFailsClosed(t *testing.T) {
	h := newHarness(t)
	requireSandbox(t, h)
	h.create(AgentSpec{ID: "boxed", Command: "/bin/sh", Args: []string{"-c", "echo ran"}, Permissions: perms()})
	r := h.get("boxed")
	// A spec the shim is handed directly, with a grants file that is not there.
	spec, err := h.e.procSpec(r, r.Args, "")
	if err != nil {
		t.Fatal(err)
	}
	spec.Sandbox = filepath.Join(t.TempDir(), "missing.json")
	pend, err := h.e.runner.Prepare(spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pend.Go(); err == nil || !strings.Contains(err.Error(), "SandboxUnavailable") {
		t.Fatalf("Go with no grants file: %v", err)
	}
	if b, _ := os.ReadFile(r.LogPath); strings.Contains(string(b), "ran") {
		t.Fatal("the agent ran without its grants")
	}
}

func TestSandboxKeptAcrossKeepAliveAndEngineCrash(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	projDir := t.TempDir()
	target := filepath.Join(projDir, "escaped")
	script := `touch ` + target + ` 2>/dev/null && echo ESCAPED || echo "denied $$"; sleep 0.3; exit 1`
	agents := []AgentSpec{{ID: "boxed", Command: "/bin/sh", Args: []string{"-c", script}, KeepAlive: true,
		GraceSec: 2, Permissions: perms()}}
	crashEngine(t, data, projDir, agents)

	h := &harness{t: t, data: data, rec: &recorder{}}
	h.e = h.engine()
	requireSandbox(t, h)
	h.project = h.e.Projects()[0]
	if _, err := h.e.SelectProject(context.Background(), h.project.ID); err != nil {
		t.Fatal(err)
	}
	// The next engine restarts it (keep-alive) at least twice more, each
	// run sandboxed by the grants the first engine wrote.
	testutil.Eventually(t, "two keep-alive restarts to try their write", func() bool {
		b, _ := os.ReadFile(h.get("boxed").LogPath)
		return strings.Count(string(b), "denied") >= 3 || strings.Contains(string(b), "ESCAPED")
	})
	if _, err := h.e.StopAgent(context.Background(), h.project.ID, "boxed", nil); err != nil && !isKind(err, ErrNotRunning) {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(h.get("boxed").LogPath)
	if strings.Contains(string(b), "ESCAPED") || strings.Count(string(b), "denied") < 3 || h.get("boxed").RestartCount < 2 {
		t.Fatalf("log after restarts:\n%s", b)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatal("a restarted run wrote outside its grants")
	}
	if r := h.get("boxed"); r.Sandbox == nil {
		t.Fatal("the record lost its sandbox")
	}
}

// Pause and unpause (a fresh start of a non-resumable agent) keep the
// sandbox: the shim applies sandbox.json again.
func TestSandboxKeptAcrossPauseAndUnpause(t *testing.T) {
	h := newHarness(t)
	requireSandbox(t, h)
	target := filepath.Join(h.project.Path, "escaped")
	h.create(AgentSpec{ID: "boxed", Command: "/bin/sh", Permissions: perms(),
		Args: []string{"-c", `touch ` + target + ` 2>/dev/null && echo ESCAPED || echo "denied $$"; sleep 30`}})
	h.start("boxed")
	h.waitLog("boxed", "denied")
	ctx := context.Background()
	if _, err := h.e.PauseAgent(ctx, h.project.ID, "boxed", true, "test"); err != nil {
		t.Fatal(err)
	}
	h.waitStatus("boxed", lifecycle.Paused)
	if _, err := h.e.UnpauseAgent(ctx, h.project.ID, "boxed"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the unpaused run to try its write", func() bool {
		b, _ := os.ReadFile(h.get("boxed").LogPath)
		return strings.Count(string(b), "denied") >= 2 || strings.Contains(string(b), "ESCAPED")
	})
	if b, _ := os.ReadFile(h.get("boxed").LogPath); strings.Contains(string(b), "ESCAPED") {
		t.Fatalf("the unpaused run was not sandboxed:\n%s", b)
	}
}
