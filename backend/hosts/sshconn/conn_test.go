package sshconn

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"shepherd/backend/hosts"
	"shepherd/backend/hosts/hostkeys"
	"shepherd/backend/hosts/internal/sshtest"
	"shepherd/backend/hosts/sshconfig"
)

// home is a user's home folder with a ~/.ssh of its own.
type home struct {
	dir string
	env sshconfig.Env
}

func newHome(t *testing.T) *home {
	t.Helper()
	h := &home{dir: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(h.dir, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	h.env = sshconfig.Env{Home: h.dir, LocalUser: "me", SystemConfig: "-"}
	return h
}

// key writes a new ed25519 key to ~/.ssh/name (encrypted with passphrase
// if one is given) and returns its public key.
func (h *home) key(t *testing.T, name, passphrase string) (ssh.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var block *pem.Block
	if passphrase != "" {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte(passphrase))
	} else {
		block, err = ssh.MarshalPrivateKey(priv, "")
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.dir, ".ssh", name), pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	pub, _ := ssh.NewPublicKey(priv.Public())
	return pub, priv
}

func (h *home) config(t *testing.T, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h.dir, ".ssh", "config"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// trust writes the server's host key to known_hosts, as an accepted one.
func (h *home) trust(t *testing.T, s *sshtest.Server) {
	t.Helper()
	db := &hostkeys.DB{User: []string{filepath.Join(h.dir, ".ssh", "known_hosts")}}
	if err := db.Accept(s.Addr, s.HostKey.PublicKey()); err != nil {
		t.Fatal(err)
	}
}

func (h *home) opts() Options {
	return Options{Env: h.env, AgentSocket: "none"}
}

// states records the states a Conn reports.
type states struct {
	ch chan hosts.State
}

func newStates() *states { return &states{ch: make(chan hosts.State, 100)} }

func (s *states) on(st hosts.State) { s.ch <- st }

// next waits for the next state of phase (skipping others).
func (s *states) next(t *testing.T, phase hosts.Phase) hosts.State {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case st := <-s.ch:
			if st.Phase == phase {
				return st
			}
		case <-timeout:
			t.Fatalf("no %s state in 20 s", phase)
		}
	}
}

// The host key: an unknown one is refused with its type and fingerprint
// and nothing is written; accepted, it is remembered and the connection
// goes through; a changed one is refused naming the known_hosts line.
func TestHostKey(t *testing.T) {
	h := newHome(t)
	pub, _ := h.key(t, "id_ed25519", "")
	srv := sshtest.New(t, pub)
	ctx := context.Background()

	_, err := Dial(ctx, srv.Addr, h.opts())
	var unknown *hostkeys.UnknownKeyError
	if !errors.As(err, &unknown) {
		t.Fatalf("first connection to an unknown host: %v", err)
	}
	if unknown.Fingerprint != ssh.FingerprintSHA256(srv.HostKey.PublicKey()) || unknown.Type != ssh.KeyAlgoED25519 {
		t.Fatalf("unknown key %+v, want %s", unknown, ssh.FingerprintSHA256(srv.HostKey.PublicKey()))
	}
	if srv.Connections() != 0 {
		t.Fatalf("the client authenticated to a host it does not know")
	}
	kh := filepath.Join(h.dir, ".ssh", "known_hosts")
	if _, err := os.Stat(kh); !os.IsNotExist(err) {
		t.Fatalf("known_hosts written without the user's word: %v", err)
	}
	target, err := sshconfig.Resolve(srv.Addr, h.env)
	if err != nil {
		t.Fatal(err)
	}
	if err := HostKeys(target).Accept(unknown.Host, unknown.Key); err != nil {
		t.Fatal(err)
	}
	c, err := Dial(ctx, srv.Addr, h.opts())
	if err != nil {
		t.Fatalf("after accepting the key: %v", err)
	}
	if st := c.State(); st.Phase != hosts.Connected {
		t.Fatalf("state %+v", st)
	}
	c.Close()
	if st := c.State(); st.Phase != hosts.Closed {
		t.Fatalf("state after Close %+v", st)
	}

	srv.SetHostKey(sshtest.NewSigner(t))
	_, err = Dial(ctx, srv.Addr, h.opts())
	var changed *hostkeys.ChangedKeyError
	if !errors.As(err, &changed) || !strings.Contains(err.Error(), kh+":1") {
		t.Fatalf("changed host key: %v", err)
	}
	if changed.Fingerprint != ssh.FingerprintSHA256(srv.HostKey.PublicKey()) {
		t.Fatalf("changed key error names %s", changed.Fingerprint)
	}
	if srv.Connections() != 1 {
		t.Fatalf("%d authenticated connections, want 1 (the changed key's refused before auth)", srv.Connections())
	}
}

// ~/.ssh/config is honoured: an alias with HostName, Port, User and
// IdentityFile; without the config the same host refuses the default keys.
func TestConfigAlias(t *testing.T) {
	h := newHome(t)
	pub, _ := h.key(t, "devbox_key", "")
	h.key(t, "id_ed25519", "") // a default key the host does not take
	srv := sshtest.New(t, pub)
	srv.User = "builder"
	h.trust(t, srv)
	h.config(t, fmt.Sprintf("Host devbox\n  HostName 127.0.0.1\n  Port %d\n  User builder\n  IdentityFile ~/.ssh/devbox_key\n", srv.Port()))
	c, err := Dial(context.Background(), "devbox", h.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if tg := c.Target(); tg.User != "builder" || tg.Addr() != srv.Addr {
		t.Fatalf("target %+v", tg)
	}
	_, err = Dial(context.Background(), "builder@"+srv.Addr, h.opts())
	if !errors.Is(err, ErrAuth) {
		t.Fatalf("without the alias (default keys only): %v", err)
	}
}

// Keys from the SSH agent; an encrypted key file is skipped with a note
// saying so, which the authentication error repeats.
func TestAgentAndEncryptedKey(t *testing.T) {
	h := newHome(t)
	pub, _ := h.key(t, "id_ed25519", "secret")
	srv := sshtest.New(t, pub)
	h.trust(t, srv)
	_, err := Dial(context.Background(), srv.Addr, h.opts())
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "id_ed25519: it is encrypted") || !strings.Contains(err.Error(), "ssh-add") {
		t.Fatalf("encrypted key, no agent: %v", err)
	}

	// The agent holds another key the host takes.
	_, priv := (&home{dir: t.TempDir()}).keyPair(t)
	ring := agent.NewKeyring()
	if err := ring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
		t.Fatal(err)
	}
	agentPub, _ := ssh.NewPublicKey(priv.Public())
	srv.Authorize(agentPub)
	sock := serveAgent(t, ring)
	opts := h.opts()
	opts.AgentSocket = sock
	c, err := Dial(context.Background(), srv.Addr, opts)
	if err != nil {
		t.Fatalf("with the agent: %v", err)
	}
	defer c.Close()
	if notes := strings.Join(c.Notes(), "\n"); !strings.Contains(notes, "encrypted") {
		t.Errorf("notes: %q", notes)
	}
}

func (h *home) keyPair(t *testing.T) (ssh.PublicKey, ed25519.PrivateKey) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := ssh.NewPublicKey(priv.Public())
	return pub, priv
}

func serveAgent(t *testing.T, ring agent.Agent) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = agent.ServeAgent(ring, c)
			}()
		}
	}()
	return sock
}

// echoSocket serves a Unix socket that answers each line with "echo: "
// and the line.
func echoSocket(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "echo.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					fmt.Fprintf(c, "echo: %s\n", sc.Text())
				}
			}()
		}
	}()
	return sock
}

// Many channels at once to a Unix socket on the host, over ONE connection
// (no session per channel); a socket with nothing behind it is an error.
func TestDialUnixManyChannelsOneConnection(t *testing.T) {
	h := newHome(t)
	pub, _ := h.key(t, "id_ed25519", "")
	srv := sshtest.New(t, pub)
	h.trust(t, srv)
	sock := echoSocket(t)
	c, err := Dial(context.Background(), srv.Addr, h.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := c.DialUnix(context.Background(), sock)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "hello %d\n", i)
			line, err := bufio.NewReader(conn).ReadString('\n')
			if err != nil || line != fmt.Sprintf("echo: hello %d\n", i) {
				errs <- fmt.Errorf("channel %d read %q: %v", i, line, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if srv.Connections() != 1 || srv.UnixChannels() != n || srv.Sessions() != 0 {
		t.Fatalf("%d connections, %d socket channels, %d sessions; want 1, %d, 0", srv.Connections(), srv.UnixChannels(), srv.Sessions(), n)
	}
	if _, err := c.DialUnix(context.Background(), filepath.Join(t.TempDir(), "none.sock")); err == nil || !strings.Contains(err.Error(), "connect failed") {
		t.Fatalf("dial a missing socket: %v", err)
	}

	// The HTTP client over the transport: each request a channel.
	hsock := filepath.Join(t.TempDir(), "api.sock")
	ln, err := net.Listen("unix", hsock)
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", r.Method, r.URL.Path)
	})}
	go hs.Serve(ln)
	defer hs.Close()
	hc := hosts.HTTPClient(c.Transport(hsock))
	resp, err := hc.Get(hosts.BaseURL + "/v1/engine")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "GET /v1/engine" || srv.Connections() != 1 {
		t.Fatalf("through the HTTP client: %q, %d connections", b, srv.Connections())
	}
}

// Remote commands run in the host's POSIX shell, the script on stdin; a
// failure carries its status and standard error.
func TestRun(t *testing.T) {
	h := newHome(t)
	pub, _ := h.key(t, "id_ed25519", "")
	srv := sshtest.New(t, pub)
	srv.Env = []string{"PATH=" + os.Getenv("PATH"), "GREETING=hi"}
	h.trust(t, srv)
	c, err := Dial(context.Background(), srv.Addr, h.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out, err := c.Run(context.Background(), "x='it''s'; printf '%s %s\\n' \"$GREETING\" \"$x\"\n")
	if err != nil || string(out) != "hi its\n" {
		t.Fatalf("run: %q %v", out, err)
	}
	_, err = c.Run(context.Background(), "echo oops >&2; exit 3")
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Status != 3 || !strings.Contains(err.Error(), "oops") {
		t.Fatalf("failing script: %v", err)
	}
	if got := srv.Execs(); len(got) != 2 || got[0] != "sh -s" {
		t.Fatalf("commands the host ran: %q", got)
	}
}

// ProxyJump: the target is reached through a jump host, both checked
// against known_hosts.
func TestProxyJump(t *testing.T) {
	h := newHome(t)
	pub, _ := h.key(t, "id_ed25519", "")
	jump := sshtest.New(t, pub)
	target := sshtest.New(t, pub)
	h.trust(t, jump)
	h.config(t, fmt.Sprintf("Host far\n  HostName 127.0.0.1\n  Port %d\n  ProxyJump hop\nHost hop\n  HostName 127.0.0.1\n  Port %d\n", target.Port(), jump.Port()))
	_, err := Dial(context.Background(), "far", h.opts())
	var unknown *hostkeys.UnknownKeyError
	if !errors.As(err, &unknown) || unknown.Fingerprint != ssh.FingerprintSHA256(target.HostKey.PublicKey()) {
		t.Fatalf("the target's unknown key behind the jump: %v", err)
	}
	h.trust(t, target)
	c, err := Dial(context.Background(), "far", h.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sock := echoSocket(t)
	conn, err := c.DialUnix(context.Background(), sock)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if jump.UnixChannels() != 0 || target.UnixChannels() != 1 || target.Connections() != 1 {
		t.Fatalf("the socket was opened on the wrong host: jump %d, target %d", jump.UnixChannels(), target.UnixChannels())
	}
}
