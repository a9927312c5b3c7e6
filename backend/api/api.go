// Package api is the engine's HTTP API: JSON over loopback, every request
// authorised by a bearer token. The same handler serves `shepherd serve` and
// the desktop app; the CLI is its client.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"shepherd/backend/claudehooks"
	"shepherd/backend/eventbus"
	"shepherd/backend/logtail"
	"shepherd/backend/sandbox"
	"shepherd/backend/secrets"
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

// Hooks receives what an agent's hooks report (*supervisor.Engine has it):
// AllowHook says whether the agent may post one now (rate-limited), Hook
// takes it.
type Hooks interface {
	AllowHook(ref supervisor.AgentRef) error
	Hook(ref supervisor.AgentRef, body []byte) error
}

// PauseInput is the optional body of POST …/pause.
type PauseInput struct {
	Note string `json:"note,omitempty"`
	Now  bool   `json:"now,omitempty"` // skip the safe point
}

// BudgetInput is the body of POST …/budget: the user's answer to a budget
// pause — raise (the limit reached, to Limit, above what was reached),
// remove (that limit), once or stop.
type BudgetInput struct {
	Action string  `json:"action"`
	Limit  float64 `json:"limit,omitempty"`
}

// Options are the handler's settings beyond the engine and the token.
type Options struct {
	Version   string        // reported by GET /v1/engine
	Bus       *eventbus.Bus // the engine's events, for GET /v1/events (nil: none)
	Heartbeat time.Duration // of idle event streams; 0: DefaultHeartbeat
	// Quit, when set, is called by POST /v1/engine/quit (after the answer
	// is sent): the engine's host shuts down.
	Quit func()
}

// EngineStatus is the answer of GET /v1/engine, a cheap health check.
type EngineStatus struct {
	PID     int    `json:"pid"`
	Version string `json:"version"`
	// Sandbox is what of the permission sandbox this machine enforces.
	Sandbox *sandbox.Support `json:"sandbox,omitempty"`
	// Alerts are what about the engine itself needs the user (its data
	// folder's disk nearly full); empty when nothing does.
	Alerts []supervisor.Alert `json:"alerts"`
}

// ProjectInput is the body of POST /v1/projects.
type ProjectInput struct {
	Path string `json:"path"`
	Name string `json:"name,omitempty"`
}

// StopInput is the optional body of POST …/stop.
type StopInput struct {
	GraceSec *int `json:"graceSec,omitempty"`
}

// Removed is the answer of DELETE …/{agent}.
type Removed struct {
	ProjectID  string `json:"projectId"`
	AgentID    string `json:"agentId"`
	Removed    bool   `json:"removed"`
	LogDeleted bool   `json:"logDeleted"`
}

// Log follow support: a tail answer carries the log's size (the offset to
// follow from), and ?since=OFFSET returns what was appended after it.
const (
	HeaderLogOffset = "X-Log-Offset"
	maxLogChunk     = 1 << 20
	maxBody         = 1 << 20
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
}

// New returns the API handler. Every request must carry
// "Authorization: Bearer <token>".
func New(eng Engine, token string, opts Options) http.Handler {
	h := &handler{eng: eng, token: []byte(token), opts: opts, mux: http.NewServeMux()}
	h.ids, _ = eng.(Identities)
	h.hooks, _ = eng.(Hooks)
	h.handle("POST "+claudehooks.Path, h.claudeHook)
	h.wt, _ = eng.(Worktrees)
	h.worktreeRoutes()
	h.commandRoutes()
	h.handle("GET /v1/engine", h.engineStatus)
	h.handle("GET /v1/whoami", h.whoami)
	h.handle("GET /v1/engine/processes", h.allProcesses)
	h.handle("GET /v1/events", h.stream)
	h.handle("POST /v1/engine/quit", h.quit)
	h.handle("GET /v1/engine/while-closed", h.whileClosed)
	h.handle("GET /v1/engine/processes/{project}/{agent}", h.oneProcess)

	h.handle("GET /v1/projects", h.listProjects)
	h.handle("POST /v1/projects", h.addProject)
	h.handle("POST /v1/projects/{project}/select", h.selectProject)
	h.handle("POST /v1/projects/{project}/stop-all", h.stopAll)
	h.handle("GET /v1/projects/{project}/events", h.events)

	h.handle("GET /v1/projects/{project}/agents", h.listAgents)
	h.handle("POST /v1/projects/{project}/agents", h.createAgent)
	h.handle("GET /v1/projects/{project}/agents/{agent}", h.getAgent)
	h.handle("DELETE /v1/projects/{project}/agents/{agent}", h.removeAgent)
	h.handle("POST /v1/projects/{project}/agents/{agent}/start", h.startAgent)
	h.handle("POST /v1/projects/{project}/agents/{agent}/stop", h.stopAgent)
	h.handle("GET /v1/projects/{project}/agents/{agent}/log", h.logTail)
	h.handle("GET /v1/projects/{project}/agents/{agent}/stats", h.statsHistory)
	h.handle("POST /v1/projects/{project}/agents/{agent}/resume", h.resumeAgent)
	h.handle("POST /v1/projects/{project}/agents/{agent}/ack", h.ackAgent)
	h.handle("PUT /v1/projects/{project}/agents/{agent}", h.updateAgent)
	h.handle("GET /v1/projects/{project}/settings", h.getSettings)
	h.handle("PUT /v1/projects/{project}/settings", h.putSettings)
	h.handle("GET /v1/projects/{project}", h.getProject)
	h.handle("POST /v1/projects/{project}/pause", h.pauseProject)
	h.handle("POST /v1/projects/{project}/unpause", h.unpauseProject)
	h.handle("POST /v1/projects/{project}/agents/{agent}/pause", h.pauseAgent)
	h.handle("POST /v1/projects/{project}/agents/{agent}/unpause", h.unpauseAgent)
	h.handle("POST /v1/projects/{project}/agents/{agent}/budget", h.answerBudget) // the user's alone: no agent raises its own budget
	h.handle("PATCH /v1/projects/{project}", h.renameProject)
	h.handle("DELETE /v1/projects/{project}", h.removeProject)
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, ok := h.identify(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="shepherd"`)
		writeError(w, http.StatusUnauthorized, "Unauthorized",
			"missing or wrong bearer token (see engine.json)")
		return
	}
	_, pattern := h.mux.Handler(r)
	if pattern == "" {
		h.noRoute(w, r)
		return
	}
	ctx := withCaller(r.Context(), c)
	if c.Agent != nil {
		ctx = supervisor.AsAgent(ctx, *c.Agent) // what only the user may do, the engine refuses
	}
	h.mux.ServeHTTP(w, r.WithContext(ctx))
}

// handle registers fn for pattern behind the caller's access check (the
// check needs the pattern's path values, which the mux sets).
func (h *handler) handle(pattern string, fn http.HandlerFunc) {
	h.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if !h.allow(w, r, pattern, CallerOf(r)) {
			return
		}
		fn(w, r)
	})
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

func (h *handler) engineStatus(w http.ResponseWriter, r *http.Request) {
	sb := h.eng.SandboxSupport()
	writeJSON(w, http.StatusOK, EngineStatus{PID: os.Getpid(), Version: h.opts.Version, Sandbox: &sb, Alerts: h.eng.Alerts()})
}

// quit answers, then asks the host to shut the engine down. Agents keep
// running (unless the host's stop-on-quit preference says otherwise).
func (h *handler) quit(w http.ResponseWriter, r *http.Request) {
	if !emptyBody(w, r) {
		return
	}
	if h.opts.Quit == nil {
		writeError(w, http.StatusNotImplemented, "NotImplemented", "this engine cannot be asked to quit")
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"pid": os.Getpid(), "quitting": true})
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	go h.opts.Quit()
}

func (h *handler) allProcesses(w http.ResponseWriter, r *http.Request) {
	stats, ok := wantStats(w, r)
	if !ok {
		return
	}
	if stats {
		for _, p := range h.eng.ProjectViews() {
			if p.Loaded {
				_ = h.eng.StatsNow(p.ID)
			}
		}
	}
	recs := h.visible(CallerOf(r), h.eng.AllAgents())
	if recs == nil {
		recs = []*store.Record{}
	}
	writeJSON(w, http.StatusOK, reveal(r, recs))
}

func (h *handler) oneProcess(w http.ResponseWriter, r *http.Request) {
	p, a := r.PathValue("project"), r.PathValue("agent")
	for _, rec := range h.eng.AllAgents() {
		if rec != nil && rec.ProjectID == p && rec.ID == a {
			writeJSON(w, http.StatusOK, reveal(r, rec))
			return
		}
	}
	// Not among the loaded projects: let the engine say what is missing.
	rec, err := h.eng.GetAgent(p, a)
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, reveal(r, rec))
}

// listProjects answers every project with its state (pause, queue).
func (h *handler) listProjects(w http.ResponseWriter, r *http.Request) {
	ps := h.eng.ProjectViews()
	if c := CallerOf(r); !c.User {
		mine := []supervisor.ProjectView{}
		for _, p := range ps {
			if p.ID == c.Agent.ProjectID {
				mine = append(mine, p)
			}
		}
		ps = mine
	}
	if ps == nil {
		ps = []supervisor.ProjectView{}
	}
	writeJSON(w, http.StatusOK, ps)
}

func (h *handler) getProject(w http.ResponseWriter, r *http.Request) {
	v, err := h.eng.ProjectState(r.PathValue("project"))
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (h *handler) pauseProject(w http.ResponseWriter, r *http.Request) {
	var in PauseInput
	if !decodeBody(w, r, &in, true) {
		return
	}
	res, err := h.eng.PauseProject(r.Context(), r.PathValue("project"), in.Note, in.Now)
	if err != nil {
		writeEngineError(w, err)
		return
	}
	if res == nil {
		res = []supervisor.StopResult{}
	}
	writeJSON(w, http.StatusOK, reveal(r, res))
}

func (h *handler) unpauseProject(w http.ResponseWriter, r *http.Request) {
	if !emptyBody(w, r) {
		return
	}
	if err := h.eng.UnpauseProject(r.Context(), r.PathValue("project")); err != nil {
		writeEngineError(w, err)
		return
	}
	v, err := h.eng.ProjectState(r.PathValue("project"))
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (h *handler) pauseAgent(w http.ResponseWriter, r *http.Request) {
	var in PauseInput
	if !decodeBody(w, r, &in, true) {
		return
	}
	rec, err := h.eng.PauseAgent(r.Context(), r.PathValue("project"), r.PathValue("agent"), in.Now, in.Note)
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, reveal(r, rec))
}

func (h *handler) unpauseAgent(w http.ResponseWriter, r *http.Request) {
	if !emptyBody(w, r) {
		return
	}
	rec, err := h.eng.UnpauseAgent(r.Context(), r.PathValue("project"), r.PathValue("agent"))
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, reveal(r, rec))
}

func (h *handler) answerBudget(w http.ResponseWriter, r *http.Request) {
	var in BudgetInput
	if !decodeBody(w, r, &in, false) {
		return
	}
	rec, err := h.eng.AnswerBudget(r.Context(), r.PathValue("project"), r.PathValue("agent"), in.Action, in.Limit)
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, reveal(r, rec))
}

func (h *handler) addProject(w http.ResponseWriter, r *http.Request) {
	var in ProjectInput
	if !decodeBody(w, r, &in, false) {
		return
	}
	if strings.TrimSpace(in.Path) == "" {
		writeError(w, http.StatusBadRequest, "ValidationError", `field "path" is required`)
		return
	}
	p, created, err := h.eng.AddProject(in.Path, in.Name)
	if err != nil {
		writeEngineError(w, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, p)
}

func (h *handler) selectProject(w http.ResponseWriter, r *http.Request) {
	if !emptyBody(w, r) {
		return
	}
	sum, err := h.eng.SelectProject(r.Context(), r.PathValue("project"))
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, sum)
}

// wantStats reads ?stats=true: the client looks at the agents' CPU and
// memory, which are then sampled (and kept sampled for a while).
func wantStats(w http.ResponseWriter, r *http.Request) (bool, bool) {
	return boolParam(w, r.URL.Query().Get("stats"), "stats")
}

func (h *handler) statsHistory(w http.ResponseWriter, r *http.Request) {
	hist, err := h.eng.StatsHistory(r.PathValue("project"), r.PathValue("agent"))
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, hist)
}

func (h *handler) listAgents(w http.ResponseWriter, r *http.Request) {
	stats, ok := wantStats(w, r)
	if !ok {
		return
	}
	if stats {
		if err := h.eng.StatsNow(r.PathValue("project")); err != nil {
			writeEngineError(w, err)
			return
		}
	}
	recs, err := h.eng.ListAgents(r.PathValue("project"))
	if err != nil {
		writeEngineError(w, err)
		return
	}
	recs = h.visible(CallerOf(r), recs)
	if recs == nil {
		recs = []*store.Record{}
	}
	writeJSON(w, http.StatusOK, reveal(r, recs))
}

func (h *handler) createAgent(w http.ResponseWriter, r *http.Request) {
	var spec supervisor.AgentSpec
	if !decodeBody(w, r, &spec, false) {
		return
	}
	if spec.TimeoutSec < 0 || spec.GraceSec < 0 {
		writeError(w, http.StatusBadRequest, "ValidationError", "timeoutSec and graceSec must not be negative")
		return
	}
	if c := CallerOf(r); !c.User {
		// On the agent's behalf: sandboxed, at most its own grants, and its.
		spec.Caller, spec.Parent = c.Agent, c.Agent.AgentID
	}
	rec, err := h.eng.CreateAgent(r.PathValue("project"), spec)
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, reveal(r, rec))
}

func (h *handler) getAgent(w http.ResponseWriter, r *http.Request) {
	rec, err := h.eng.GetAgent(r.PathValue("project"), r.PathValue("agent"))
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, reveal(r, rec))
}

func (h *handler) removeAgent(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	force, ok := boolParam(w, q.Get("force"), "force")
	if !ok {
		return
	}
	deleteLog, ok := boolParam(w, q.Get("deleteLog"), "deleteLog")
	if !ok {
		return
	}
	p, a := r.PathValue("project"), r.PathValue("agent")
	o := supervisor.RemoveOptions{Force: force, DeleteLog: deleteLog}
	if !h.removeOptions(w, r, &o) {
		return
	}
	var err error
	if h.wt != nil {
		err = h.wt.Remove(r.Context(), p, a, o)
	} else {
		err = h.eng.RemoveAgent(r.Context(), p, a, force, deleteLog)
	}
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, Removed{ProjectID: p, AgentID: a, Removed: true, LogDeleted: deleteLog})
}

func (h *handler) startAgent(w http.ResponseWriter, r *http.Request) {
	if !emptyBody(w, r) {
		return
	}
	rec, err := h.eng.StartAgent(r.Context(), r.PathValue("project"), r.PathValue("agent"))
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, reveal(r, rec))
}

func (h *handler) resumeAgent(w http.ResponseWriter, r *http.Request) {
	if !emptyBody(w, r) {
		return
	}
	rec, err := h.eng.ResumeAgent(r.Context(), r.PathValue("project"), r.PathValue("agent"))
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, reveal(r, rec))
}

// ackAgent acknowledges what the agent needed of the user (SPEC
// "Attention"): it leaves Needs you until it needs them again.
func (h *handler) ackAgent(w http.ResponseWriter, r *http.Request) {
	if !emptyBody(w, r) {
		return
	}
	rec, err := h.eng.AckAgent(r.PathValue("project"), r.PathValue("agent"))
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, reveal(r, rec))
}

func (h *handler) updateAgent(w http.ResponseWriter, r *http.Request) {
	var spec supervisor.AgentSpec
	if !decodeBody(w, r, &spec, false) {
		return
	}
	if spec.ID != "" && spec.ID != r.PathValue("agent") {
		writeError(w, http.StatusBadRequest, "ValidationError", "the body's id differs from the agent in the path")
		return
	}
	spec.ID = r.PathValue("agent")
	if c := CallerOf(r); !c.User {
		cur, err := h.eng.GetAgent(r.PathValue("project"), spec.ID)
		if err != nil {
			writeEngineError(w, err)
			return
		}
		spec.Caller, spec.Parent = c.Agent, cur.Parent
	}
	rec, err := h.eng.UpdateAgent(r.PathValue("project"), spec)
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, reveal(r, rec))
}

func (h *handler) getSettings(w http.ResponseWriter, r *http.Request) {
	s, err := h.eng.GetSettings(r.PathValue("project"))
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s)
}

// putSettings takes some or all of the fields: those left out keep their
// current values.
func (h *handler) putSettings(w http.ResponseWriter, r *http.Request) {
	s, err := h.eng.GetSettings(r.PathValue("project"))
	if err != nil {
		writeEngineError(w, err)
		return
	}
	if !decodeBody(w, r, &s, false) {
		return
	}
	s, err = h.eng.PutSettings(r.PathValue("project"), s)
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s)
}

func (h *handler) renameProject(w http.ResponseWriter, r *http.Request) {
	var in ProjectInput
	if !decodeBody(w, r, &in, false) {
		return
	}
	if in.Path != "" {
		writeError(w, http.StatusBadRequest, "ValidationError", "a project's path cannot change; add the new folder as a project")
		return
	}
	p, err := h.eng.RenameProject(r.PathValue("project"), in.Name)
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (h *handler) removeProject(w http.ResponseWriter, r *http.Request) {
	force, ok := boolParam(w, r.URL.Query().Get("force"), "force")
	if !ok {
		return
	}
	if err := h.eng.RemoveProject(r.Context(), r.PathValue("project"), force); err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"projectId": r.PathValue("project"), "removed": true})
}

func (h *handler) stopAgent(w http.ResponseWriter, r *http.Request) {
	var in StopInput
	if !decodeBody(w, r, &in, true) {
		return
	}
	var grace *time.Duration
	if in.GraceSec != nil {
		if *in.GraceSec < 0 {
			writeError(w, http.StatusBadRequest, "ValidationError", "graceSec must not be negative")
			return
		}
		// More would wrap around to a negative duration: an immediate SIGKILL.
		if int64(*in.GraceSec) > maxGraceSec {
			writeError(w, http.StatusBadRequest, "ValidationError",
				fmt.Sprintf("graceSec must be between 0 and %d, not %d", maxGraceSec, *in.GraceSec))
			return
		}
		d := time.Duration(*in.GraceSec) * time.Second
		grace = &d
	}
	rec, err := h.eng.StopAgent(r.Context(), r.PathValue("project"), r.PathValue("agent"), grace)
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, reveal(r, rec))
}

func (h *handler) stopAll(w http.ResponseWriter, r *http.Request) {
	if !emptyBody(w, r) {
		return
	}
	res, err := h.eng.StopAll(r.Context(), r.PathValue("project"))
	if err != nil {
		writeEngineError(w, err)
		return
	}
	if res == nil {
		res = []supervisor.StopResult{}
	}
	writeJSON(w, http.StatusOK, reveal(r, res))
}

func (h *handler) logTail(w http.ResponseWriter, r *http.Request) {
	p, a := r.PathValue("project"), r.PathValue("agent")
	q := r.URL.Query()
	if s := q.Get("since"); s != "" {
		off, err := strconv.ParseInt(s, 10, 64)
		if err != nil || off < 0 {
			writeError(w, http.StatusBadRequest, "ValidationError",
				fmt.Sprintf("query parameter since=%q must be a byte offset (an integer ≥ 0)", s))
			return
		}
		h.logSince(w, p, a, off)
		return
	}
	n := 0
	if s := q.Get("tail"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			writeError(w, http.StatusBadRequest, "ValidationError",
				fmt.Sprintf("query parameter tail=%q must be a number of lines (an integer ≥ 0)", s))
			return
		}
		n = v
	}
	// The size before the tail is read: a follower starting there may see a
	// line twice if it was written in between, but never misses one.
	rec, err := h.eng.GetAgent(p, a)
	if err != nil {
		writeEngineError(w, err)
		return
	}
	size := fileSize(rec.LogPath)
	data, err := h.eng.LogTail(p, a, n)
	if err != nil {
		writeEngineError(w, err)
		return
	}
	w.Header().Set(HeaderLogOffset, strconv.FormatInt(size, 10))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

// logSince returns what the agent's log holds after offset off (at most
// maxLogChunk), and the offset to ask for next. Offsets count across the
// log's rotations; bytes rotated away are passed over (the answer starts at
// the oldest kept). A log that became shorter than off (deleted and started
// again) is read from its start.
func (h *handler) logSince(w http.ResponseWriter, p, a string, off int64) {
	rec, err := h.eng.GetAgent(p, a)
	if err != nil {
		writeEngineError(w, err)
		return
	}
	c, err := logtail.Since(rec.LogPath, off, maxLogChunk, false)
	if errors.Is(err, logtail.ErrMoving) {
		c, err = logtail.Chunk{Start: off, Next: off}, nil // nothing new this time: ask again
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "InternalError", fmt.Sprintf("read log of '%s': %v", a, err))
		return
	}
	w.Header().Set(HeaderLogOffset, strconv.FormatInt(c.Next, 10))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(c.Data)
}

// fileSize is the offset just past the end of the log at path (0: none).
func fileSize(path string) int64 {
	if path == "" {
		return 0
	}
	return logtail.Size(path)
}

// events answers the project's events.jsonl as NDJSON, oldest first;
// ?agent= keeps one agent's, ?limit=N the last N.
func (h *handler) events(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 0
	if s := q.Get("limit"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			writeError(w, http.StatusBadRequest, "ValidationError",
				fmt.Sprintf("query parameter limit=%q must be a number of events (an integer ≥ 0)", s))
			return
		}
		limit = v
	}
	evs, err := h.eng.Events(r.PathValue("project"), q.Get("agent"), limit)
	if err != nil {
		writeEngineError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	for _, ev := range evs {
		_ = enc.Encode(ev)
	}
}

func boolParam(w http.ResponseWriter, s, name string) (bool, bool) {
	if s == "" {
		return false, true
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		writeError(w, http.StatusBadRequest, "ValidationError",
			fmt.Sprintf("query parameter %s=%q must be true or false", name, s))
		return false, false
	}
	return v, true
}

// reveal masks the secret environment values of the records in v (a
// record, a list of them, stop results) unless the request asks for them
// with ?reveal=true.
func reveal(r *http.Request, v any) any {
	if ok, _ := strconv.ParseBool(r.URL.Query().Get("reveal")); ok {
		return v
	}
	switch x := v.(type) {
	case *store.Record:
		return secrets.MaskRecord(x)
	case []*store.Record:
		out := make([]*store.Record, len(x))
		for i, rec := range x {
			out[i] = secrets.MaskRecord(rec)
		}
		return out
	case []supervisor.StopResult:
		out := make([]supervisor.StopResult, len(x))
		for i, res := range x {
			res.Record = secrets.MaskRecord(res.Record)
			out[i] = res
		}
		return out
	}
	return v
}

// claudeHook receives one of Claude Code's hooks from the agent that posts
// it (SPEC "Attention"): only an agent's own credential may, and it speaks
// for that agent only. The answer is 200 with an empty body, which Claude
// Code reads as "go on as you would": Shepherd listens, it does not decide.
func (h *handler) claudeHook(w http.ResponseWriter, r *http.Request) {
	c := CallerOf(r)
	if c.Agent == nil {
		writeError(w, http.StatusForbidden, supervisor.KindName(supervisor.ErrPermissionDenied),
			"hooks are reported by an agent with its own credential (SHEPHERD_AGENT_TOKEN), not with the user's token")
		return
	}
	if h.hooks == nil {
		writeError(w, http.StatusNotFound, supervisor.KindName(supervisor.ErrNotFound), "this engine receives no hooks")
		return
	}
	if err := h.hooks.AllowHook(*c.Agent); err != nil {
		// Refused before its body is read: a flood costs next to nothing.
		w.Header().Set("Retry-After", "1")
		writeEngineError(w, err)
		return
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, claudehooks.MaxBody))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "ValidationError",
			fmt.Sprintf("hook input is larger than %d bytes", claudehooks.MaxBody))
		return
	}
	if err := h.hooks.Hook(*c.Agent, b); err != nil {
		writeEngineError(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// whileClosed is what the engine found at its start, for every project
// (SPEC "Attention"); 404 while it is still loading them.
func (h *handler) whileClosed(w http.ResponseWriter, r *http.Request) {
	wc := h.eng.WhileClosed()
	if wc == nil {
		writeError(w, http.StatusNotFound, supervisor.KindName(supervisor.ErrNotFound), "the engine is still loading its projects")
		return
	}
	writeJSON(w, http.StatusOK, wc)
}
