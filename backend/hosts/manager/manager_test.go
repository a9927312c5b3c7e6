package manager

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/crypto/ssh"

	"shepherd/backend/api"
	"shepherd/backend/hosts"
	"shepherd/backend/hosts/bootstrap"
	"shepherd/backend/hosts/internal/sshtest"
	"shepherd/backend/hosts/registry"
	"shepherd/backend/hosts/sshconfig"
	"shepherd/backend/hosts/sshconn"
	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

func TestMain(m *testing.M) {
	code := m.Run()
	sshtest.RemoveEngines()
	os.Exit(code)
}

// events records what the manager emits.
type events struct {
	mu  sync.Mutex
	all []emitted
	ch  chan emitted
}

type emitted struct {
	name string
	data any
}

func (e *events) emit(name string, data any) {
	e.mu.Lock()
	e.all = append(e.all, emitted{name, data})
	e.mu.Unlock()
	select {
	case e.ch <- emitted{name, data}:
	default:
	}
}

func (e *events) snapshot() []emitted {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]emitted(nil), e.all...)
}

// fixture is a host on this machine (an SSH server in the test, a home of
// its own, engines built for it) and a manager for it.
type fixture struct {
	srv   *sshtest.Server
	home  string // the host's
	opts  Options
	url   string
	evs   *events
	local string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the test host is this machine: Linux")
	}
	root := t.TempDir()
	home, run, local := filepath.Join(root, "home"), filepath.Join(root, "run"), filepath.Join(root, "local")
	for _, d := range []string{home, run, filepath.Join(local, ".ssh")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, _ := ssh.MarshalPrivateKey(priv, "")
	if err := os.WriteFile(filepath.Join(local, ".ssh", "id_ed25519"), pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	pub, _ := ssh.NewPublicKey(priv.Public())
	srv := sshtest.New(t, pub)
	srv.Dir = home
	srv.Env = []string{"HOME=" + home, "XDG_RUNTIME_DIR=" + run, "PATH=" + os.Getenv("PATH")}
	evs := &events{ch: make(chan emitted, 1000)}
	f := &fixture{srv: srv, home: home, url: "ssh://me@" + srv.Addr, evs: evs, local: local}
	f.opts = Options{
		File: filepath.Join(root, "data", registry.FileName),
		SSH: sshconn.Options{Env: sshconfig.Env{Home: local, LocalUser: "me", SystemConfig: "-"}, AgentSocket: "none",
			Keepalive: 200 * time.Millisecond, BackoffMin: 50 * time.Millisecond, BackoffMax: 200 * time.Millisecond},
		Builds:   bootstrap.Builds{Dir: sshtest.Engines(t, "hosts-mgr-1"), Version: "hosts-mgr-1"},
		Emit:     evs.emit,
		Logger:   zerolog.Nop(),
		RetryMin: 50 * time.Millisecond, RetryMax: 200 * time.Millisecond,
	}
	if err := os.MkdirAll(filepath.Dir(f.opts.File), 0o700); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) manager(t *testing.T) *Manager {
	t.Helper()
	m, err := New(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// reap ends the host's engine at the end of the test.
func reap(t *testing.T, pid int) {
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	})
}

// problem is an API error's kind and message.
func problem(err error) (string, string) {
	var body api.ErrorBody
	b, _ := json.Marshal(err)
	_ = json.Unmarshal(b, &body)
	return body.Error, body.Message
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An unknown key is refused with its fingerprint and taken only as that
// fingerprint; a changed key is refused at add and, for a host added
// before, on its next connection (state refused, not retried into).
func TestAddHostKeys(t *testing.T) {
	f := newFixture(t)
	m := f.manager(t)
	ctx := context.Background()
	fp := ssh.FingerprintSHA256(f.srv.HostKey.PublicKey())

	_, err := m.AddHost(ctx, "box", f.url, "")
	if name, msg := problem(err); name != "HostKeyUnknown" || !strings.Contains(msg, fp) {
		t.Fatalf("unknown key: %v (%s)", err, name)
	}
	_, err = m.AddHost(ctx, "box", f.url, "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	if name, msg := problem(err); name != "HostKeyUnknown" || !strings.Contains(msg, "not accepted") {
		t.Fatalf("another fingerprint: %v", err)
	}
	if hs := m.ListHosts(); len(hs) != 0 {
		t.Fatalf("a refused host was kept: %+v", hs)
	}
	if _, err := os.Stat(filepath.Join(f.local, ".ssh", "known_hosts")); err == nil {
		t.Fatal("known_hosts written before the key was accepted")
	}
	v, err := m.AddHost(ctx, "box", f.url, fp)
	if err != nil {
		t.Fatal(err)
	}
	reap(t, v.PID)
	if v.State != api.HostConnected || v.PID == 0 || !strings.HasPrefix(v.Version, "hosts-mgr-1-") {
		t.Fatalf("added: %+v", v)
	}
	kh, _ := os.ReadFile(filepath.Join(f.local, ".ssh", "known_hosts"))
	if !strings.Contains(string(kh), strings.TrimSpace(string(ssh.MarshalAuthorizedKey(f.srv.HostKey.PublicKey())))) {
		t.Fatalf("known_hosts: %s", kh)
	}
	if hs, _ := (&registry.File{Path: f.opts.File}).List(); len(hs) != 1 || hs[0].Name != "box" || hs[0].URL != f.url {
		t.Fatalf("registry: %+v", hs)
	}
	if _, err := m.AddHost(ctx, "box", f.url, ""); err == nil {
		t.Fatal("the same name twice")
	} else if name, _ := problem(err); name != "HostExists" {
		t.Fatalf("same name: %v", err)
	}

	// The host's key changes (reinstalled, or someone in the middle).
	f.srv.SetHostKey(sshtest.NewSigner(t))
	_, err = m.AddHost(ctx, "box2", f.url, "")
	if name, msg := problem(err); name != "HostKeyChanged" || !strings.Contains(msg, "has changed") {
		t.Fatalf("changed key at add: %v", err)
	}
	f.srv.Stop()
	f.srv.Start()
	eventually(t, "the host refused", func() bool { v, _ := m.GetHost("box"); return v.State == api.HostRefused })
	v, _ = m.GetHost("box")
	if !strings.Contains(v.Error, "has changed") {
		t.Fatalf("refused: %+v", v)
	}
	if _, _, err := m.HostTransport("box"); err == nil {
		t.Fatal("a refused host is reachable")
	}

	// Removed: forgotten, its engine left running.
	if err := m.RemoveHost("box"); err != nil {
		t.Fatal(err)
	}
	if syscall.Kill(v.PID, 0) != nil {
		t.Fatal("removing the host stopped its engine")
	}
	if hs, _ := (&registry.File{Path: f.opts.File}).List(); len(hs) != 0 {
		t.Fatalf("registry after rm: %+v", hs)
	}
	if err := m.RemoveHost("box"); err == nil {
		t.Fatal("removed twice")
	}
}

// client reaches the host's engine as the proxy does.
func client(t *testing.T, m *Manager, name string) *api.Client {
	t.Helper()
	rt, tok, err := m.HostTransport(name)
	if err != nil {
		t.Fatal(err)
	}
	return &api.Client{BaseURL: hosts.BaseURL, Token: tok(), HTTP: &http.Client{Transport: rt}}
}

// The host is lost while one of its agents ends and another keeps
// running: nothing is recovered here, the agents are untouched there, and
// once it is back the stream resumes with the events of the gap (the exit
// among them, from the host's own event ids) and what happened is told
// once (host:away). Then its engine is killed: the next stream starts it
// again, and the reconnect says so, with its own recovery's summary. A
// manager started again (the local engine restarted) reaches it from the
// registry.
func TestReconnectWhileAway(t *testing.T) {
	f := newFixture(t)
	if err := (&sshtestKeys{f}).accept(); err != nil {
		t.Fatal(err)
	}
	m := f.manager(t)
	ctx := context.Background()
	v, err := m.AddHost(ctx, "box", f.url, "")
	if err != nil {
		t.Fatal(err)
	}
	reap(t, v.PID)
	c := client(t, m, "box")
	proj := filepath.Join(f.home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := api.Call(ctx, c, api.AddProject, api.AddProjectIn{Body: api.ProjectInput{Path: proj}})
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Body.ID
	stop := filepath.Join(f.home, "stop")
	for _, a := range []struct{ id, script string }{
		{"ends", "while [ ! -e " + stop + " ]; do sleep 0.05; done; exit 3"},
		{"stays", "sleep 600"},
	} {
		if _, err := api.Call(ctx, c, api.CreateAgent, api.CreateAgentIn{Project: pid, Body: specOf(a.id, a.script)}); err != nil {
			t.Fatal(err)
		}
		if _, err := api.Call(ctx, c, api.StartAgent, api.AgentIn{Project: pid, Agent: a.id}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "two agents running, seen locally", func() bool { v, _ := m.GetHost("box"); return v.Running == 2 })
	recs, _ := api.Call(ctx, c, api.ListProcesses, api.StatsIn{})
	pids := map[string]int{}
	for _, r := range recs.Body {
		pids[r.ID] = r.PID
	}
	m.mu.Lock()
	hb := m.hosts["box"]
	m.mu.Unlock()
	hb.mu.Lock()
	lastBefore := hb.lastID
	hb.mu.Unlock()

	// The host is lost.
	f.srv.Stop()
	eventually(t, "the host unreachable", func() bool { v, _ := m.GetHost("box"); return v.State == api.HostUnreachable })
	if _, _, err := m.HostTransport("box"); err == nil {
		t.Fatal("an unreachable host's engine was reachable")
	} else if name, msg := problem(err); name != "HostUnreachable" || !strings.Contains(msg, "unreachable since") {
		t.Fatalf("unreachable: %v", err)
	}
	if v, _ := m.GetHost("box"); v.Agents != 2 {
		t.Fatalf("an unreachable host's agents were forgotten: %+v", v)
	}
	// While away, one agent ends there; the other runs on.
	if err := os.WriteFile(stop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the agent ended on the host", func() bool { return syscall.Kill(pids["ends"], 0) != nil })
	awayBefore := len(f.evs.snapshot())

	f.srv.Start()
	eventually(t, "the host back", func() bool { v, _ := m.GetHost("box"); return v.State == api.HostConnected && v.WhileAway != nil })
	v, _ = m.GetHost("box")
	w := v.WhileAway
	if w.EngineRestarted || len(w.Agents) != 1 || w.Agents[0].AgentID != "ends" || w.Agents[0].Ended != 1 ||
		w.Agents[0].From != string(lifecycle.Running) || w.Agents[0].ExitCode == nil || *w.Agents[0].ExitCode != 3 {
		t.Fatalf("while away: %+v", w)
	}
	if syscall.Kill(pids["stays"], 0) != nil {
		t.Fatal("the agent that stays was touched")
	}
	// The exit came in the stream, replayed from the host's own ids.
	var replayed, away bool
	for _, e := range f.evs.snapshot()[awayBefore:] {
		if he, ok := e.data.(api.HostEvent); ok && he.Event == "agent:state" && he.ID > lastBefore {
			var r store.Record
			_ = json.Unmarshal(he.Data.(json.RawMessage), &r)
			if r.ID == "ends" && r.Status.Terminal() {
				replayed = true
			}
		}
		if e.name == api.EventHostAway {
			away = true
		}
	}
	if !replayed || !away {
		t.Fatalf("after the reconnect: the exit replayed %v, host:away sent %v", replayed, away)
	}

	// The host's engine is killed; the host is still there.
	if err := syscall.Kill(v.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the engine started again", func() bool {
		v, _ := m.GetHost("box")
		return v.PID != 0 && v.PID != pids["_"] && v.WhileAway != nil && v.WhileAway.EngineRestarted
	})
	v2, _ := m.GetHost("box")
	reap(t, v2.PID)
	if v2.PID == v.PID || v2.WhileAway.Recovery == nil || v2.Agents != 2 {
		t.Fatalf("after the engine was killed: %+v", v2)
	}
	if syscall.Kill(pids["stays"], 0) != nil {
		t.Fatal("the host's engine's restart lost the agent that stays")
	}

	// The local engine is closed; meanwhile the agent that stayed ends
	// there. It starts again: the host from the registry, its stream from
	// where it was, and what happened while this engine was down told.
	m.Close()
	if _, err := os.Stat(m.seenPath("box")); err != nil {
		t.Fatalf("what was seen of the host was not kept: %v", err)
	}
	if err := syscall.Kill(pids["stays"], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	m2 := f.manager(t)
	eventually(t, "reached from the registry, with what happened meanwhile", func() bool {
		v, _ := m2.GetHost("box")
		return v.State == api.HostConnected && v.Agents == 2 && v.WhileAway != nil
	})
	v3, _ := m2.GetHost("box")
	if w := v3.WhileAway; w.EngineRestarted || len(w.Agents) != 1 || w.Agents[0].AgentID != "stays" || w.Agents[0].Ended != 1 {
		t.Fatalf("while this engine was down: %+v", w)
	}
	// A removed host leaves nothing behind.
	if err := m2.RemoveHost("box"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m2.seenPath("box")); !os.IsNotExist(err) {
		t.Fatalf("a removed host's seen file: %v", err)
	}
}

func specOf(id, script string) (s supervisor.AgentSpec) {
	s.ID, s.Command, s.Args = id, "sh", []string{"-c", script}
	return s
}

type sshtestKeys struct{ f *fixture }

func (k *sshtestKeys) accept() error {
	return sshconn.HostKeys(sshconfig.Target{KnownHosts: []string{filepath.Join(k.f.local, ".ssh", "known_hosts")}}).
		Accept(k.f.srv.Addr, k.f.srv.HostKey.PublicKey())
}
