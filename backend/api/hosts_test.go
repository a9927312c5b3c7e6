package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"shepherd/backend/api"
	"shepherd/backend/supervisor"
)

// agentsFake is an engine that knows one agent's credential.
type agentsFake struct{ *fakeEngine }

func (agentsFake) AgentByCredential(tok string) (supervisor.AgentRef, bool) {
	return supervisor.AgentRef{ProjectID: "p1", AgentID: "a1"}, tok == "agent-credential"
}
func (agentsFake) Owns(caller, target supervisor.AgentRef) bool { return false }

// oneHost is the hosts of a local engine with one host, "box", whose
// engine is another handler in this process (its own token).
type oneHost struct {
	remote http.Handler
	up     bool
	calls  int
}

const remoteToken = "remote-token-remote-token-remote-token-remote-token-remote-tok"

func (o *oneHost) ListHosts() []api.HostView {
	return []api.HostView{{Name: "box", State: api.HostConnected}}
}
func (o *oneHost) GetHost(name string) (api.HostView, error) {
	return api.HostView{}, errors.New("unused")
}
func (o *oneHost) AddHost(context.Context, string, string, string) (api.HostView, error) {
	return api.HostView{}, api.HostProblem(http.StatusConflict, "HostKeyUnknown", "the host key of box is not known: ssh-ed25519 SHA256:abc")
}
func (o *oneHost) RemoveHost(string) error { return nil }
func (o *oneHost) HostTransport(name string) (http.RoundTripper, func() string, error) {
	if name != "box" {
		return nil, nil, api.HostProblem(http.StatusNotFound, "HostNotFound", "Host '"+name+"' not found")
	}
	if !o.up {
		return nil, nil, api.HostProblem(http.StatusServiceUnavailable, "HostUnreachable", "host 'box' is unreachable since 14:02")
	}
	return roundTrip(func(r *http.Request) (*http.Response, error) {
		o.calls++
		return api.NewInProcess(o.remote, "").HTTP.Transport.RoundTrip(r)
	}), func() string { return remoteToken }, nil
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// /v1/hosts/{host}/… reaches the host's engine as /v1/… with its own
// token, for the user only: an agent's credential is refused before
// anything is sent there; a host not there or unreachable says so.
func TestHostProxy(t *testing.T) {
	remote := newFake(t.TempDir())
	remote.projects[0].Name = "on-box"
	hosts := &oneHost{remote: api.New(remote, remoteToken, api.Options{Version: "remote"}), up: true}
	local := newFake(t.TempDir())
	h := api.New(agentsFake{local}, token, api.Options{Version: "test", Hosts: hosts})

	w := do(t, h, "GET", "/v1/hosts/box/projects", "")
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"on-box"`) {
		t.Fatalf("proxied list: %d %s", w.Code, w.Body)
	}
	// The typed client, addressed to the host.
	c := api.NewInProcess(h, token).OnHost("box")
	ps, err := api.Call(context.Background(), c, api.ListProjects, api.NoInput{})
	if err != nil || len(ps.Body) != 1 || ps.Body[0].Name != "on-box" {
		t.Fatalf("client on host: %+v %v", ps, err)
	}
	st, err := api.Call(context.Background(), c, api.GetEngine, api.NoInput{})
	if err != nil || st.Body.Version != "remote" {
		t.Fatalf("getEngine on host: %+v %v", st, err)
	}
	// Errors of the host's engine come back as they are.
	w = do(t, h, "GET", "/v1/hosts/box/nothing", "")
	if w.Code != 404 || errorBody(t, w).Error != "NotFound" || !strings.Contains(errorBody(t, w).Message, "/v1/nothing") {
		t.Fatalf("remote error: %d %s", w.Code, w.Body)
	}

	before := hosts.calls
	w = doAuth(t, h, "GET", "/v1/hosts/box/projects", "", "Bearer agent-credential")
	if w.Code != 403 || errorBody(t, w).Error != "PermissionDenied" || hosts.calls != before {
		t.Fatalf("an agent's credential: %d %s (calls %d→%d)", w.Code, w.Body, before, hosts.calls)
	}
	w = doAuth(t, h, "GET", "/v1/hosts", "", "Bearer agent-credential")
	if w.Code != 403 {
		t.Fatalf("an agent listing hosts: %d %s", w.Code, w.Body)
	}
	w = doAuth(t, h, "GET", "/v1/hosts/box/projects", "", "Bearer "+remoteToken)
	if w.Code != 401 {
		t.Fatalf("the host's own token on the local engine: %d", w.Code)
	}
	w = do(t, h, "GET", "/v1/hosts/nobox/projects", "")
	if w.Code != 404 || errorBody(t, w).Error != "HostNotFound" {
		t.Fatalf("no such host: %d %s", w.Code, w.Body)
	}
	hosts.up = false
	w = do(t, h, "GET", "/v1/hosts/box/projects", "")
	if w.Code != 503 || errorBody(t, w).Error != "HostUnreachable" || !strings.Contains(errorBody(t, w).Message, "since 14:02") {
		t.Fatalf("unreachable: %d %s", w.Code, w.Body)
	}

	w = do(t, h, "GET", "/v1/hosts", "")
	var list []api.HostView
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &list) != nil || len(list) != 1 || list[0].Name != "box" {
		t.Fatalf("listHosts: %d %s", w.Code, w.Body)
	}
	w = do(t, h, "POST", "/v1/hosts", `{"name":"box","url":"me@box"}`)
	if w.Code != 409 || errorBody(t, w).Error != "HostKeyUnknown" {
		t.Fatalf("addHost: %d %s", w.Code, w.Body)
	}
	// An engine without hosts (a host's own) has none of it.
	plain, _ := newHandler(t)
	if w := do(t, plain, "GET", "/v1/hosts", ""); w.Code != 404 {
		t.Fatalf("no hosts: %d", w.Code)
	}
	if w := do(t, plain, "GET", "/v1/hosts/box/projects", ""); w.Code != 404 {
		t.Fatalf("no hosts, proxy: %d", w.Code)
	}
}
