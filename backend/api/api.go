// Package api is the engine's HTTP API: JSON over loopback, every request
// authorised by a bearer token. The same handler serves `shepherd serve` and
// the desktop app's engine; the CLI, the MCP server and the window are its
// clients. Each operation is defined once (op.go, ops_*.go); its routing,
// validation, access rule, OpenAPI description (openapi.json, served at GET
// /v1/openapi.json) and the Go client's call come from that definition.
package api

//go:generate go run ./openapigen openapi.json
//go:generate npm --prefix ../../frontend run --silent gen:api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"shepherd/backend/eventbus"
	"shepherd/backend/permtool"
	"shepherd/backend/sandbox"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// Engine is what the API needs of the engine; *supervisor.Engine satisfies it.
type Engine interface {
	Projects() []store.Project
	AddProject(path, name string) (store.Project, bool, error)
	SelectProject(ctx context.Context, id string) (*supervisor.SyncSummary, error)
	ListAgents(projectID string) ([]*store.Record, error)
	GetAgent(projectID, agentID string) (*store.Record, error)
	CreateAgent(projectID string, spec supervisor.AgentSpec) (*store.Record, error)
	StartAgent(ctx context.Context, projectID, agentID string) (*store.Record, error)
	StopAgent(ctx context.Context, projectID, agentID string, grace *time.Duration) (*store.Record, error)
	StopAll(ctx context.Context, projectID string) ([]supervisor.StopResult, error)
	RemoveAgent(ctx context.Context, projectID, agentID string, force, deleteLog bool) error
	LogTail(projectID, agentID string, n int) ([]byte, error)
	Events(projectID, agentID string, limit int) ([]store.Event, error)
	AllAgents() []*store.Record
	ResumeAgent(ctx context.Context, projectID, agentID string) (*store.Record, error)
	AckAgent(projectID, agentID string) (*store.Record, error)
	WhileClosed() *supervisor.WhileClosed
	UpdateAgent(projectID string, spec supervisor.AgentSpec) (*store.Record, error)
	GetSettings(projectID string) (supervisor.Settings, error)
	PutSettings(projectID string, s supervisor.Settings) (supervisor.Settings, error)
	RenameProject(projectID, name string) (store.Project, error)
	RemoveProject(ctx context.Context, projectID string, force bool) error
	ProjectViews() []supervisor.ProjectView
	ProjectState(projectID string) (supervisor.ProjectView, error)
	PauseProject(ctx context.Context, projectID, note string, now bool) ([]supervisor.StopResult, error)
	UnpauseProject(ctx context.Context, projectID string) error
	PauseAgent(ctx context.Context, projectID, agentID string, now bool, note string) (*store.Record, error)
	UnpauseAgent(ctx context.Context, projectID, agentID string) (*store.Record, error)
	AnswerBudget(ctx context.Context, projectID, agentID, action string, limit float64) (*store.Record, error)
	Look(projectID string, d time.Duration) error
	StatsNow(projectID string) error
	StatsHistory(projectID, agentID string) ([]store.Stats, error)
	SandboxSupport() sandbox.Support
	// Alerts are the engine's own alerts (a nearly full disk).
	Alerts() []supervisor.Alert
}

// Identities is what the API needs to know agents' callers: the agent a
// credential belongs to, and what it owns (*supervisor.Engine has it). An
// Engine without it knows only the user's token.
type Identities interface {
	AgentByCredential(token string) (supervisor.AgentRef, bool)
	Owns(caller, target supervisor.AgentRef) bool
}

// Options are the handler's settings beyond the engine and the token.
type Options struct {
	Version   string        // reported by GET /v1/engine
	Bus       *eventbus.Bus // the engine's events, for GET /v1/events (nil: none)
	Heartbeat time.Duration // of idle event streams; 0: DefaultHeartbeat
	// Quit, when set, is called by POST /v1/engine/quit (after the answer
	// is sent): the engine's host shuts down.
	Quit func()
	// Hosts are other machines' engines, reached through this one (nil:
	// none; the hosts' operations answer 404).
	Hosts Hosts
}

// Limits of what a request carries.
const (
	maxBody = 1 << 20
	// maxGraceSec is the longest stop grace, as for an agent's own graceSec
	// (and MCP's grace_period_ms).
	maxGraceSec = 3600
)

type handler struct {
	eng   Engine
	ids   Identities // nil: only the user's token is known
	hooks Hooks      // nil: no agent's hooks are received
	wt    Worktrees  // nil: the engine has no worktree agents
	token []byte
	opts  Options
	mux   *http.ServeMux
	api   huma.API
}

// New returns the API handler. Every request must carry
// "Authorization: Bearer <token>".
func New(eng Engine, token string, opts Options) http.Handler {
	h := &handler{eng: eng, token: []byte(token), opts: opts, mux: http.NewServeMux()}
	h.ids, _ = eng.(Identities)
	h.hooks, _ = eng.(Hooks)
	h.wt, _ = eng.(Worktrees)
	h.api = newAPI(h, h.mux)
	h.mux.Handle(permtool.Path, h.permissionEndpoint())
	return h
}

// newAPI registers every operation of h on mux.
func newAPI(h *handler, mux *http.ServeMux) huma.API {
	cfg := huma.Config{OpenAPI: description(), Formats: map[string]huma.Format{"application/json": jsonFormat},
		DefaultFormat: "application/json"}
	a := engineAPI{huma.NewAPI(cfg, humago.NewAdapter(mux, ""))}
	a.UseMiddleware(h.accessCheck)
	for _, r := range operations {
		r.register(h, a)
	}
	return a
}

// engineAPI answers JSON whatever the request's Accept says, and reads a
// body as JSON whatever its Content-Type says (curl -d sends a form type).
type engineAPI struct{ huma.API }

func (engineAPI) Negotiate(string) (string, error) { return "application/json", nil }
func (engineAPI) Unmarshal(_ string, data []byte, v any) error {
	return jsonFormat.Unmarshal(data, v)
}

// unwrap is the request and the answer under a huma context.
func unwrap(ctx huma.Context) (*http.Request, http.ResponseWriter) { return humago.Unwrap(ctx) }

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, ok := h.identify(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="shepherd"`)
		writeError(w, http.StatusUnauthorized, "Unauthorized",
			"missing or wrong bearer token (see engine.json)")
		return
	}
	if host, rest, ok := hostPath(r.URL.EscapedPath()); ok {
		h.proxyHost(w, r, c, host, rest)
		return
	}
	_, pattern := h.mux.Handler(r)
	if pattern == "" {
		h.noRoute(w, r)
		return
	}
	ctx := withCaller(r.Context(), c)
	ctx = context.WithValue(ctx, routeKey{}, r.Method+" "+r.URL.Path)
	if ok, _ := strconv.ParseBool(r.URL.Query().Get("reveal")); ok {
		ctx = context.WithValue(ctx, revealKey{}, true)
	}
	if c.Agent != nil {
		ctx = supervisor.AsAgent(ctx, *c.Agent) // what only the user may do, the engine refuses
	}
	h.mux.ServeHTTP(w, r.WithContext(ctx))
}

// noRoute answers an unknown path (404) or a known path with the wrong
// method (405, with Allow) in the API's JSON error shape instead of the
// mux's plain text.
func (h *handler) noRoute(w http.ResponseWriter, r *http.Request) {
	rec := &headerRecorder{header: http.Header{}}
	mh, _ := h.mux.Handler(r)
	mh.ServeHTTP(rec, r)
	if rec.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", rec.header.Get("Allow"))
		writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowed",
			fmt.Sprintf("method %s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, rec.header.Get("Allow")))
		return
	}
	writeError(w, http.StatusNotFound, "NotFound", fmt.Sprintf("no such endpoint: %s %s", r.Method, r.URL.Path))
}

// noSuchEndpoint is the answer of an operation this engine does not have
// (worktrees, hooks), as if it were not routed.
func noSuchEndpoint(ctx context.Context) error {
	route, _ := ctx.Value(routeKey{}).(string)
	return problem(http.StatusNotFound, "NotFound", "no such endpoint: "+route)
}

type routeKey struct{}

type headerRecorder struct {
	header http.Header
	status int
}

func (r *headerRecorder) Header() http.Header         { return r.header }
func (r *headerRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *headerRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

type revealKey struct{}

// revealed says whether the request asked for secret values as they are
// (?reveal=true).
func revealed(ctx context.Context) bool {
	ok, _ := ctx.Value(revealKey{}).(bool)
	return ok
}
