package sshhost

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"runtime"
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

// The provider gives an address and a transport, and the API client works
// over them as over a local engine. The engine killed on a host that is
// still reachable is started again by the next request (new pid, new
// token, unseen by the client); an unreachable host starts nothing: its
// requests fail at once.
func TestProvider(t *testing.T) {
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
	if err := (&hostkeys.DB{User: []string{filepath.Join(local, ".ssh", "known_hosts")}}).Accept(srv.Addr, srv.HostKey.PublicKey()); err != nil {
		t.Fatal(err)
	}
	p := Provider{
		Dest:      "ssh://me@" + srv.Addr,
		SSH:       sshconn.Options{Env: sshconfig.Env{Home: local, LocalUser: "me", SystemConfig: "-"}, AgentSocket: "none"},
		Bootstrap: bootstrap.Options{Builds: bootstrap.Builds{Dir: sshtest.Engines(t, "hosts-test-1"), Version: "hosts-test-1"}},
	}
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
