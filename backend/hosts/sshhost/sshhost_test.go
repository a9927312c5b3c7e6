package sshhost

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"shepherd/backend/api"
	"shepherd/backend/hosts"
	"shepherd/backend/hosts/bootstrap"
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

func reap(t *testing.T, pid int) {
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	})
}

// provider is a Provider for a host on this machine: an SSH server in the
// test, a home folder of its own, engines built for it.
func provider(t *testing.T) (Provider, *sshtest.Server) {
	t.Helper()
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
	if err := (&hostkeys.DB{User: []string{filepath.Join(local, ".ssh", "known_hosts")}}).Accept(srv.Addr, srv.HostKey.PublicKey()); err != nil {
		t.Fatal(err)
	}
	p := Provider{
		Dest:      "ssh://me@" + srv.Addr,
		SSH:       sshconn.Options{Env: sshconfig.Env{Home: local, LocalUser: "me", SystemConfig: "-"}, AgentSocket: "none"},
		Bootstrap: bootstrap.Options{Builds: bootstrap.Builds{Dir: sshtest.Engines(t, "hosts-test-1"), Version: "hosts-test-1"}},
	}
	return p, srv
}

// The provider gives an address and a transport, and the API client works
// over them as over a local engine. The engine killed on a host that is
// still reachable is started again by the next request (new pid, new
// token, unseen by the client); an unreachable host starts nothing: its
// requests fail at once.
func TestProvider(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the test host is this machine: Linux")
	}
	p, srv := provider(t)
	ctx := context.Background()
	addr, tr, err := p.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	reap(t, addr.PID)
	if tr.State().Phase != hosts.Connected || addr.Token == "" || addr.Endpoint == "" {
		t.Fatalf("open: %+v %+v", addr, tr.State())
	}
	client := &api.Client{BaseURL: hosts.BaseURL, Token: addr.Token, HTTP: hosts.HTTPClient(tr)}
	var st api.EngineStatus
	if _, err := client.JSON(ctx, "GET", "/v1/engine", nil, &st); err != nil || st.PID != addr.PID {
		t.Fatalf("GET /v1/engine: %+v %v", st, err)
	}

	// The engine dies; the host is still there.
	if err := syscall.Kill(addr.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for syscall.Kill(addr.PID, 0) == nil {
		time.Sleep(10 * time.Millisecond)
	}
	client.HTTP.CloseIdleConnections()
	_, err = client.JSON(ctx, "GET", "/v1/engine", nil, &st)
	now := tr.(*Transport).Address()
	if now.PID != addr.PID {
		reap(t, now.PID)
	}
	if err != nil {
		t.Fatalf("after the engine was killed: %v", err)
	}
	if st.PID == addr.PID || st.PID != now.PID || now.Token == addr.Token {
		t.Fatalf("restarted engine: status pid %d, address %+v, was %+v", st.PID, now, addr)
	}
	if srv.Connections() != 1 {
		t.Fatalf("%d SSH connections, want 1", srv.Connections())
	}

	// The host is gone: nothing is started, the request fails at once.
	srv.Stop()
	for tr.State().Phase == hosts.Connected {
		time.Sleep(10 * time.Millisecond)
	}
	client.HTTP.CloseIdleConnections()
	sessions := srv.Sessions()
	_, err = client.JSON(ctx, "GET", "/v1/engine", nil, &st)
	// (api.Client keeps the cause in words.)
	if !errors.Is(err, api.ErrUnreachable) || !strings.Contains(err.Error(), hosts.ErrUnreachable.Error()) {
		t.Fatalf("request to an unreachable host: %v", err)
	}
	if srv.Sessions() != sessions || tr.(*Transport).Address() != now {
		t.Fatalf("an unreachable host triggered a bootstrap")
	}
	if syscall.Kill(now.PID, 0) != nil {
		t.Fatalf("the engine on the unreachable host was touched")
	}
}

// The event stream over the transport resumes after the host was away
// with nothing missed: what the host's engine did during the gap comes
// first when the stream is opened again with the last id seen
// (Last-Event-ID).
func TestEventStreamResumesAfterReconnect(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the test host is this machine: Linux")
	}
	p, srv := provider(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, tr, err := p.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	reap(t, addr.PID)
	client := &api.Client{BaseURL: hosts.BaseURL, Token: addr.Token, HTTP: hosts.HTTPClient(tr)}
	var proj store.Project
	if _, err := client.JSON(ctx, "POST", "/v1/projects", map[string]string{"path": t.TempDir()}, &proj); err != nil {
		t.Fatal(err)
	}
	type seen struct {
		id    uint64
		agent string
	}
	events := make(chan seen, 100)
	// stream opens the stream and returns once the engine said hello (it
	// is subscribed).
	stream := func(last uint64) chan error {
		done := make(chan error, 1)
		hello := make(chan struct{}, 1)
		go func() {
			done <- client.Stream(ctx, api.StreamIn{Project: proj.ID, LastEventID: strconv.FormatUint(last, 10)}, func(ev api.StreamEvent) error {
				if ev.Name == "hello" {
					hello <- struct{}{}
				}
				if ev.Name == "agent:state" {
					var rec store.Record
					_ = json.Unmarshal(ev.Data, &rec)
					events <- seen{ev.ID, rec.ID}
				}
				return nil
			})
		}()
		select {
		case <-hello:
		case err := <-done:
			t.Fatalf("the stream ended before its hello: %v", err)
		case <-time.After(20 * time.Second):
			t.Fatal("no hello on the stream")
		}
		return done
	}
	create := func(c *api.Client, id string) {
		t.Helper()
		if _, err := c.JSON(ctx, "POST", "/v1/projects/"+proj.ID+"/agents", map[string]any{"id": id, "command": "true"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	next := func(agent string) seen {
		t.Helper()
		for {
			select {
			case s := <-events:
				if s.agent == agent {
					return s
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("no agent:state of %s", agent)
			}
		}
	}
	ended := stream(0)
	create(client, "before")
	last := next("before").id

	// The host goes away; its engine goes on, and things happen there.
	srv.Stop()
	if err := <-ended; !errors.Is(err, api.ErrUnreachable) {
		t.Fatalf("the stream when the host went away: %v", err)
	}
	local := &api.Client{BaseURL: "http://engine", Token: addr.Token, HTTP: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", addr.Endpoint)
		}}}}
	create(local, "gap-1")
	create(local, "gap-2")

	srv.Start()
	tr.(*Transport).Conn().Reconnect()
	for tr.State().Phase != hosts.Connected {
		time.Sleep(10 * time.Millisecond)
	}
	stream(last)
	g1 := next("gap-1")
	g2 := next("gap-2")
	if g1.id <= last || g2.id <= g1.id {
		t.Fatalf("ids: before %d, gap %d and %d", last, g1.id, g2.id)
	}
	if srv.Connections() != 2 {
		t.Fatalf("%d SSH connections, want 2 (before and after the gap)", srv.Connections())
	}
}
