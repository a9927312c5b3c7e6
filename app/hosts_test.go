package app

import (
	"net/http"
	"sync"
	"testing"

	"shepherd/backend/api"
	"shepherd/backend/engine"
)

// pathsSeen answers every request with an empty list and records its path.
type pathsSeen struct {
	mu    sync.Mutex
	paths []string
}

func (p *pathsSeen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.paths = append(p.paths, r.URL.Path)
	p.mu.Unlock()
	w.Header().Set(api.HeaderLogOffset, "12")
	if r.URL.Path[len(r.URL.Path)-4:] == "/log" {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("one\ntwo\n"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("[]"))
}

func (p *pathsSeen) last() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paths[len(p.paths)-1]
}

// The window shows one machine: after UseHost its calls and its logs go to
// that host's engine through the local one; the hosts' own operations, and
// a call naming this computer, stay here.
func TestUseHost(t *testing.T) {
	seen := &pathsSeen{}
	a := New("test")
	a.host, a.local = &engine.Host{}, api.NewInProcess(seen, "tok")
	call := func(op string, params map[string]any) string {
		t.Helper()
		if _, err := a.Call(op, params, ""); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		return seen.last()
	}
	if p := call("listProjects", map[string]any{}); p != "/v1/projects" {
		t.Fatalf("local: %s", p)
	}
	a.UseHost("box")
	if p := call("listProjects", map[string]any{}); p != "/v1/hosts/box/projects" {
		t.Fatalf("on box: %s", p)
	}
	if p := call("listAgents", map[string]any{"project": "p1"}); p != "/v1/hosts/box/projects/p1/agents" {
		t.Fatalf("on box: %s", p)
	}
	if p := call("listHosts", map[string]any{}); p != "/v1/hosts" {
		t.Fatalf("the hosts' list: %s", p)
	}
	// The hosts' own operations name the host they are about, here.
	if p := call("getHost", map[string]any{"host": "gpu"}); p != "/v1/hosts/gpu" {
		t.Fatalf("a host's view: %s", p)
	}
	if p := call("removeHost", map[string]any{"host": "gpu"}); p != "/v1/hosts/gpu" {
		t.Fatalf("a host removed: %s", p)
	}
	if p := call("listProjects", map[string]any{"host": ""}); p != "/v1/projects" {
		t.Fatalf("this computer named: %s", p)
	}
	if p := call("listProjects", map[string]any{"host": "gpu"}); p != "/v1/hosts/gpu/projects" {
		t.Fatalf("another host named: %s", p)
	}
	chunk, err := a.Logs.Tail("p1", "a1", 10)
	if err != nil || seen.last() != "/v1/hosts/box/projects/p1/agents/a1/log" || len(chunk.Lines) != 2 || chunk.Offset != 12 {
		t.Fatalf("a host's log: %+v %v (%s)", chunk, err, seen.last())
	}
	a.UseHost("")
	if p := call("listProjects", map[string]any{}); p != "/v1/projects" {
		t.Fatalf("back: %s", p)
	}
}
