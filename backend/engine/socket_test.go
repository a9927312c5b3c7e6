package engine

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"shepherd/internal/testutil"
)

// serve --socket listens on a Unix socket (0600) in the runtime folder and
// on no TCP port; engine.json says where, with the token; Close removes
// both. --socket with --listen is refused.
func TestServeSocket(t *testing.T) {
	p := testutil.Isolate(t)
	if _, err := Start(context.Background(), Options{Socket: true, Listen: "127.0.0.1:0", Paths: &p, Console: io.Discard}); err == nil ||
		!strings.Contains(err.Error(), "not both") {
		t.Fatalf("--socket with --listen: %v", err)
	}

	before := tcpListeners(t)
	h, err := Start(context.Background(), Options{Socket: true, Paths: &p, Console: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	sock := SocketFile(p)
	fi, err := os.Stat(sock)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %s: %v %v, want a socket 0600", sock, fi.Mode(), err)
	}
	if after := tcpListeners(t); after != before {
		t.Fatalf("the engine opened %d TCP listeners in socket mode", after-before)
	}
	b, err := os.ReadFile(p.EngineFile())
	if err != nil {
		t.Fatal(err)
	}
	var info SocketEngineInfo
	if err := json.Unmarshal(b, &info); err != nil || info.Socket != sock || info.URL != "unix://"+sock || info.Token == "" || info.PID != os.Getpid() {
		t.Fatalf("engine.json %s: %v", b, err)
	}
	// The API answers on the socket, with the token only.
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	get := func(token string) int {
		req, _ := http.NewRequest("GET", "http://engine/v1/engine", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(info.Token); code != 200 {
		t.Fatalf("GET /v1/engine with the token: %d", code)
	}
	if code := get("wrong"); code != 401 {
		t.Fatalf("GET /v1/engine with a wrong token: %d", code)
	}
	c.CloseIdleConnections()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{sock, p.EngineFile()} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s left after Close: %v", f, err)
		}
	}
}

// tcpListeners counts this process's listening TCP sockets (Linux: its
// socket inodes in /proc/net/tcp{,6} in state LISTEN).
func tcpListeners(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	mine := map[string]bool{}
	for _, fd := range fds {
		if l, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(l, "socket:[") {
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
