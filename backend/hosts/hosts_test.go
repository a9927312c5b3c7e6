package hosts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeTransport dials a Unix socket; its engine "restarts" (a new token)
// on the first dial after restartNext is set.
type fakeTransport struct {
	sock        string
	mu          sync.Mutex
	token       string
	restartNext bool
	down        bool
	dials       atomic.Int32
}

func (f *fakeTransport) DialEngine(ctx context.Context) (net.Conn, error) {
	f.dials.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, fmt.Errorf("%w: test host", ErrUnreachable)
	}
	if f.restartNext {
		f.restartNext, f.token = false, "new-token"
	}
	return (&net.Dialer{}).DialContext(ctx, "unix", f.sock)
}
func (f *fakeTransport) State() State { return State{Phase: Connected} }
func (f *fakeTransport) Close() error { return nil }
func (f *fakeTransport) Address() Address {
	f.mu.Lock()
	defer f.mu.Unlock()
	return Address{Token: f.token}
}

// Every request carries the engine's token of the moment, and one that
// found the engine restarted (during its own dial) is sent again with the
// new token, body and all.
func TestHTTPClientFollowsToken(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "e.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	want := atomic.Value{}
	want.Store("old-token")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+want.Load().(string) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.Path, b)
	})}
	go srv.Serve(ln)
	defer srv.Close()

	tr := &fakeTransport{sock: sock, token: "old-token"}
	c := HTTPClient(tr)
	do := func(method, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, BaseURL+"/v1/x", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer stale-from-the-caller")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, b := do("GET", ""); code != 200 || b != "GET /v1/x " {
		t.Fatalf("GET: %d %q", code, b)
	}
	// The engine restarts: the next dial finds it with a new token.
	c.CloseIdleConnections()
	want.Store("new-token")
	tr.mu.Lock()
	tr.restartNext = true
	tr.mu.Unlock()
	if code, b := do("POST", "payload"); code != 200 || b != "POST /v1/x payload" {
		t.Fatalf("POST after a restart: %d %q", code, b)
	}

	// An unreachable host: the transport's error, at once.
	c.CloseIdleConnections()
	tr.mu.Lock()
	tr.down = true
	tr.mu.Unlock()
	_, err = c.Get(BaseURL + "/v1/x")
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("unreachable: %v", err)
	}
}
