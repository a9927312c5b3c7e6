package api_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shepherd/backend/api"
)

// Only loopback addresses are accepted; anything other machines could reach
// is refused with a clear error, before anything listens.
func TestCheckListenAddr(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
		want string // the error mentions it
	}{
		{"", true, ""},
		{"127.0.0.1:0", true, ""},
		{"127.0.0.1:8080", true, ""},
		{"127.1.2.3:0", true, ""},
		{"localhost:0", true, ""},
		{"[::1]:0", true, ""},
		{"0.0.0.0:0", false, "loopback"},
		{":8080", false, "all interfaces"},
		{"[::]:0", false, "loopback"},
		{"192.168.1.10:0", false, "loopback"},
		{"10.0.0.1:80", false, "loopback"},
		{"example.com:80", false, "loopback"},
		{"127.0.0.1", false, "host:port"},
		{"127.0.0.1:http-nope", false, "bad port"},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			_, err := api.CheckListenAddr(tc.addr)
			if tc.ok != (err == nil) {
				t.Fatalf("CheckListenAddr(%q) = %v, want ok=%v", tc.addr, err, tc.ok)
			}
			if err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not mention %q", err, tc.want)
			}
			if err != nil && tc.want == "loopback" && !errors.Is(err, api.ErrNotLoopback) {
				t.Fatalf("error %v does not wrap ErrNotLoopback", err)
			}
		})
	}
}

func TestServeRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		s, err := api.Serve(context.Background(), addr, http.NotFoundHandler())
		if err == nil {
			s.Shutdown(context.Background())
			t.Fatalf("Serve(%q) listened on %s", addr, s.URL)
		}
		if !errors.Is(err, api.ErrNotLoopback) {
			t.Errorf("Serve(%q) = %v, want ErrNotLoopback", addr, err)
		}
	}
}

// Serve listens on a random loopback port by default, answers with the
// handler through a real connection, and stops when its context ends.
func TestServeAndClient(t *testing.T) {
	f := newFake(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := api.Serve(ctx, "", api.New(f, token, api.Options{Version: "v-test"}))
	if err != nil {
		t.Fatal(err)
	}
	tcp := s.Addr().(*net.TCPAddr)
	if !tcp.IP.Equal(net.IPv4(127, 0, 0, 1)) || tcp.Port == 0 || !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Fatalf("listening on %v (%s), want 127.0.0.1:<random>", tcp, s.URL)
	}

	c := api.NewClient(api.EngineInfo{URL: s.URL, Token: token})
	var st api.EngineStatus
	if _, err := c.JSON(ctx, "GET", "/v1/engine", nil, &st); err != nil || st.Version != "v-test" || st.PID != os.Getpid() {
		t.Fatalf("GET /v1/engine = %+v, %v", st, err)
	}

	// An error answer becomes an *api.Error with the engine's words.
	_, err = c.JSON(ctx, "GET", "/v1/projects/p1/agents/ghost", nil, nil)
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != 404 || ae.Name != "ProcessNotFound" || ae.Message != "Process 'ghost' not found" {
		t.Fatalf("missing agent: %#v", err)
	}

	// A wrong token is refused over the wire too.
	bad := api.NewClient(api.EngineInfo{URL: s.URL, Token: "nope"})
	_, err = bad.JSON(ctx, "GET", "/v1/projects", nil, nil)
	if !errors.As(err, &ae) || ae.Status != 401 || ae.Name != "Unauthorized" {
		t.Fatalf("wrong token: %#v", err)
	}

	cancel()
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("server did not stop after its context ended")
	}
	if err := s.Err(); err != nil {
		t.Fatalf("server error after a clean stop: %v", err)
	}
	_, err = c.JSON(context.Background(), "GET", "/v1/engine", nil, nil)
	if !errors.Is(err, api.ErrUnreachable) {
		t.Fatalf("request to a stopped server = %v, want ErrUnreachable", err)
	}
}

// engine.json is written atomically with mode 0600 in a 0700 folder, read
// back, and removed only while it still describes the same engine.
func TestEngineInfoFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run", "shepherd")
	path := filepath.Join(dir, "engine.json")
	tok, err := api.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	if len(tok) != 64 || strings.Trim(tok, "0123456789abcdef") != "" {
		t.Fatalf("token %q is not 32 bytes of hex", tok)
	}
	if tok2, _ := api.NewToken(); tok2 == tok {
		t.Fatal("two tokens are equal")
	}
	info := api.EngineInfo{URL: "http://127.0.0.1:1234", Token: tok, PID: 42}
	if err := api.WriteEngineInfo(path, info); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("engine.json mode %v, want 0600", st.Mode().Perm())
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v, want 0700", st.Mode().Perm())
	}
	got, err := api.ReadEngineInfo(path)
	if err != nil || got != info {
		t.Fatalf("read back %+v, %v", got, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %d files, want only engine.json (no temp files left)", len(entries))
	}

	other := info
	other.PID = 43
	if err := api.RemoveEngineInfo(path, other); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal("engine.json of another engine was removed")
	}
	if err := api.RemoveEngineInfo(path, info); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("engine.json still there after removal")
	}
	if err := api.RemoveEngineInfo(path, info); err != nil {
		t.Fatalf("second removal: %v", err)
	}
	if _, err := api.ReadEngineInfo(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reading a missing engine.json = %v, want ErrNotExist", err)
	}
	_ = os.WriteFile(path, []byte("{"), 0o600)
	if _, err := api.ReadEngineInfo(path); err == nil {
		t.Fatal("a broken engine.json was accepted")
	}
}
