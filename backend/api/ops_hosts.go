package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"shepherd/backend/supervisor"
)

// Hosts: other machines' engines reached over SSH (SPEC "Hosts"). The local
// engine keeps the list and one connection per host; every operation of a
// host's engine is reached through the local one at
// /v1/hosts/{host}/<the operation's path after /v1/> (GET
// /v1/hosts/box/projects is box's GET /v1/projects), for the user's token
// only. Client.Host addresses a client's calls there.

// Host states.
const (
	HostConnected  = "connected"
	HostConnecting = "connecting"
	// HostUnreachable: lost (or never reached); reconnects are tried.
	HostUnreachable = "unreachable"
	// HostNeedsNewerEngine: no engine of this Shepherd runs on its platform.
	HostNeedsNewerEngine = "needs-newer-engine"
	// HostRefused: its key changed, or it took none of ours: the user must
	// act; nothing is retried by itself.
	HostRefused = "refused"
)

// HostView is one host as the local engine sees it now.
type HostView struct {
	Name  string `json:"name"`
	URL   string `json:"url" doc:"ssh://user@host[:port], user@host or an alias of ~/.ssh/config"`
	State string `json:"state" enum:"connected,connecting,unreachable,needs-newer-engine,refused"`
	// Since is when the host entered its state (for unreachable: when it
	// was lost; failed reconnects do not move it).
	Since   time.Time  `json:"since"`
	Error   string     `json:"error,omitempty" doc:"why it is unreachable, refused or needs a newer engine"`
	NextTry *time.Time `json:"nextTry,omitempty" doc:"when the next reconnect is tried"`
	// Agents counts its engine's agents as last seen (kept while it is
	// away: they keep running there).
	Agents   int    `json:"agents"`
	Running  int    `json:"running"`
	NeedsYou int    `json:"needsYou"`
	Version  string `json:"version,omitempty" doc:"the build of its engine"`
	PID      int    `json:"pid,omitempty" doc:"its engine's pid on the host"`
	// WhileAway is what happened there during the last time it was away
	// (like the engine's own While Shepherd was closed); nil until a
	// reconnect found something.
	WhileAway *HostAway `json:"whileAway,omitempty"`
}

// HostAway is what happened on a host while it was unreachable, found on
// reconnect from its engine's state and events.
type HostAway struct {
	Lost time.Time `json:"lost" doc:"when the connection was lost"`
	Back time.Time `json:"back" doc:"when it was back"`
	// EngineRestarted: the host's engine itself ended meanwhile (killed,
	// crashed) and was started again; its own recovery took its agents
	// back, as Recovery says.
	EngineRestarted bool                    `json:"engineRestarted"`
	Recovery        *supervisor.WhileClosed `json:"recovery,omitempty"`
	Agents          []HostAgentChange       `json:"agents"`
}

// HostAgentChange is one agent that changed on a host while it was away.
type HostAgentChange struct {
	ProjectID string `json:"projectId"`
	AgentID   string `json:"agentId"`
	From      string `json:"from,omitempty" doc:"its status when the host was lost (empty: created meanwhile)"`
	To        string `json:"to,omitempty" doc:"its status now (empty: removed meanwhile)"`
	// Ended counts the runs that ended meanwhile (an agent restarted meanwhile ended and runs again).
	Ended     int    `json:"ended"`
	ExitCode  *int   `json:"exitCode,omitempty"`
	Attention string `json:"attention,omitempty" doc:"why it needs you now"`
}

// HostEvent is an event of a host's engine, in the local stream as
// "host:event".
type HostEvent struct {
	Host  string `json:"host"`
	ID    uint64 `json:"id" doc:"the event's id on the host's engine"`
	Event string `json:"event"`
	Data  any    `json:"data"`
}

// Event names of hosts in the local stream.
const (
	EventHostState   = "host:state"   // data: HostView, on every change
	EventHostEvent   = "host:event"   // data: HostEvent
	EventHostAway    = "host:away"    // data: HostView with its WhileAway, on a reconnect that found something
	EventHostRemoved = "host:removed" // data: HostRemoved
)

// Hosts is what the API needs of the hosts (the local engine's manager).
type Hosts interface {
	ListHosts() []HostView
	GetHost(name string) (HostView, error)
	AddHost(ctx context.Context, name, url, acceptKey string) (HostView, error)
	RemoveHost(name string) error
	// HostTransport reaches a connected host's engine: the round tripper
	// and the engine's token of the moment.
	HostTransport(name string) (http.RoundTripper, func() string, error)
}

// HostProblem is an error answer of the hosts (name: HostNotFound,
// HostKeyUnknown, …).
func HostProblem(status int, name, msg string) error { return problem(status, name, msg) }

// AddHostInput is the body of POST /v1/hosts.
type AddHostInput struct {
	Name string `json:"name" doc:"a short name: lowercase letters, digits, '-' and '_'"`
	URL  string `json:"url" doc:"ssh://user@host[:port], user@host or an alias of ~/.ssh/config"`
	// AcceptKey accepts the host's key when it is not known yet: the
	// fingerprint the user compared (SHA256:…), as an earlier answer
	// HostKeyUnknown showed it. A changed key is never accepted.
	AcceptKey string `json:"acceptKey,omitempty" doc:"the SHA256 fingerprint of the host key to accept (when known_hosts does not know it)"`
}

// AddHostIn is the input of addHost.
type AddHostIn struct {
	Body AddHostInput
}

// HostIn names a host.
type HostIn struct {
	Host string `path:"host" doc:"the host's name"`
}

// HostRemoved is the answer of removeHost.
type HostRemoved struct {
	Name    string `json:"name"`
	Removed bool   `json:"removed"`
}

func (h *handler) hostsOrNone(ctx context.Context) (Hosts, error) {
	if h.opts.Hosts == nil {
		return nil, noSuchEndpoint(ctx)
	}
	return h.opts.Hosts, nil
}

var ListHosts = define(&Op[NoInput, Reply[[]HostView]]{
	ID: "listHosts", Method: http.MethodGet, Path: "/v1/hosts", Access: UserOnly,
	Summary: "The hosts: other machines' engines reached over SSH, each with its state",
	Doc:     "Every operation of a host's engine is at /v1/hosts/{host}/<its path after /v1/>, for the user only.",
}, func(h *handler, ctx context.Context, _ *NoInput) (*Reply[[]HostView], error) {
	hs, err := h.hostsOrNone(ctx)
	if err != nil {
		return nil, err
	}
	out := hs.ListHosts()
	if out == nil {
		out = []HostView{}
	}
	return &Reply[[]HostView]{out}, nil
})

var GetHost = define(&Op[HostIn, Reply[HostView]]{
	ID: "getHost", Method: http.MethodGet, Path: "/v1/hosts/{host}", Access: UserOnly,
	Summary: "One host and its state",
}, func(h *handler, ctx context.Context, in *HostIn) (*Reply[HostView], error) {
	hs, err := h.hostsOrNone(ctx)
	if err != nil {
		return nil, err
	}
	v, err := hs.GetHost(in.Host)
	if err != nil {
		return nil, err
	}
	return &Reply[HostView]{v}, nil
})

var AddHost = define(&Op[AddHostIn, Reply[HostView]]{
	ID: "addHost", Method: http.MethodPost, Path: "/v1/hosts", Access: UserOnly, Status: http.StatusCreated,
	Summary: "Add a host: connect over SSH, check its key, install and start its engine",
	Doc: "An unknown host key is refused with HostKeyUnknown and its fingerprint (send it again as acceptKey once " +
		"compared); a changed key with HostKeyChanged; a platform without an engine with NeedsNewerEngine.",
}, func(h *handler, ctx context.Context, in *AddHostIn) (*Reply[HostView], error) {
	hs, err := h.hostsOrNone(ctx)
	if err != nil {
		return nil, err
	}
	v, err := hs.AddHost(ctx, in.Body.Name, in.Body.URL, in.Body.AcceptKey)
	if err != nil {
		return nil, err
	}
	return &Reply[HostView]{v}, nil
})

var RemoveHost = define(&Op[HostIn, Reply[HostRemoved]]{
	ID: "removeHost", Method: http.MethodDelete, Path: "/v1/hosts/{host}", Access: UserOnly,
	Summary: "Forget a host: its connection is closed; its engine and agents keep running there",
}, func(h *handler, ctx context.Context, in *HostIn) (*Reply[HostRemoved], error) {
	hs, err := h.hostsOrNone(ctx)
	if err != nil {
		return nil, err
	}
	if err := hs.RemoveHost(in.Host); err != nil {
		return nil, err
	}
	return &Reply[HostRemoved]{HostRemoved{Name: in.Host, Removed: true}}, nil
})

// hostPath splits /v1/hosts/{host}/<rest> (escaped); ok is false for any
// other path (and for /v1/hosts/{host} itself).
func hostPath(escaped string) (host, rest string, ok bool) {
	tail, ok := strings.CutPrefix(escaped, "/v1/hosts/")
	if !ok {
		return "", "", false
	}
	name, rest, ok := strings.Cut(tail, "/")
	if !ok || name == "" {
		return "", "", false
	}
	host, err := url.PathUnescape(name)
	if err != nil {
		return "", "", false
	}
	return host, rest, true
}

// proxyHost sends a request for /v1/hosts/{host}/<rest> to the host's
// engine as /v1/<rest>, with that engine's token: the answer (and an
// event stream, as it comes) goes back as it is. Only the user's token
// reaches another host: an agent's credential is refused.
func (h *handler) proxyHost(w http.ResponseWriter, r *http.Request, c Caller, host, rest string) {
	if !c.User {
		writeError(w, http.StatusForbidden, supervisor.KindName(supervisor.ErrPermissionDenied),
			fmt.Sprintf("agent '%s' cannot reach host '%s': only the user can", c.Agent.AgentID, host))
		return
	}
	if h.opts.Hosts == nil {
		writeError(w, http.StatusNotFound, "NotFound", "no such endpoint: "+r.Method+" "+r.URL.Path)
		return
	}
	rt, token, err := h.opts.Hosts.HostTransport(host)
	if err != nil {
		ae := asError(err).(*apiError)
		writeError(w, ae.status, ae.Name, ae.Message)
		return
	}
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			u := *pr.In.URL
			u.Scheme, u.Host = "http", "shepherd-engine"
			u.RawPath = "/v1/" + rest
			u.Path, _ = url.PathUnescape(u.RawPath)
			pr.Out.URL = &u
			pr.Out.Host = u.Host
			pr.Out.Header.Set("Authorization", "Bearer "+token())
		},
		Transport:     rt,
		FlushInterval: -1, // event streams as they come
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return
			}
			writeError(w, http.StatusBadGateway, "HostUnreachable", fmt.Sprintf("host '%s' did not answer: %v", host, err))
		},
	}
	p.ServeHTTP(w, r)
}
