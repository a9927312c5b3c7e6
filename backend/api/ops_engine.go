package api

import (
	"context"
	"encoding/json"
	"net/http"
	"os"

	"shepherd/backend/sandbox"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// The engine itself: who it is, who the caller is, every agent it
// supervises, quitting, what it found at its start, and this description.

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

// Whoami is the answer of GET /v1/whoami.
type Whoami struct {
	User      bool   `json:"user"`
	ProjectID string `json:"projectId,omitempty"`
	AgentID   string `json:"agentId,omitempty"`
}

// Quitting is the answer of POST /v1/engine/quit.
type Quitting struct {
	PID      int  `json:"pid"`
	Quitting bool `json:"quitting"`
}

// StatsIn asks for the agents' CPU and memory.
type StatsIn struct {
	Stats bool `query:"stats" doc:"true: sample the agents' CPU and memory now (and keep sampling them a while)"`
}

var GetEngine = define(&Op[NoInput, Reply[EngineStatus]]{
	ID: "getEngine", Method: http.MethodGet, Path: "/v1/engine", Access: AnyCaller,
	Summary: "The engine's pid, version, sandbox support and alerts (a cheap health check)",
}, func(h *handler, ctx context.Context, _ *NoInput) (*Reply[EngineStatus], error) {
	sb := h.eng.SandboxSupport()
	return &Reply[EngineStatus]{EngineStatus{PID: os.Getpid(), Version: h.opts.Version, Sandbox: &sb, Alerts: h.eng.Alerts()}}, nil
})

var GetWhoami = define(&Op[NoInput, Reply[Whoami]]{
	ID: "whoami", Method: http.MethodGet, Path: "/v1/whoami", Access: AnyCaller,
	Summary: "Who the caller is to the engine: the user, or the agent whose credential it holds",
}, func(h *handler, ctx context.Context, _ *NoInput) (*Reply[Whoami], error) {
	if c := callerIn(ctx); !c.User {
		return &Reply[Whoami]{Whoami{ProjectID: c.Agent.ProjectID, AgentID: c.Agent.AgentID}}, nil
	}
	return &Reply[Whoami]{Whoami{User: true}}, nil
})

var ListProcesses = define(&Op[StatsIn, Reply[[]*store.Record]]{
	ID: "listProcesses", Method: http.MethodGet, Path: "/v1/engine/processes", Access: AnyCaller, Reveal: true,
	Summary: "Every agent of every loaded project (an agent sees itself and what it created)",
}, func(h *handler, ctx context.Context, in *StatsIn) (*Reply[[]*store.Record], error) {
	if in.Stats {
		for _, p := range h.eng.ProjectViews() {
			if p.Loaded {
				_ = h.eng.StatsNow(p.ID)
			}
		}
	}
	recs := h.visible(callerIn(ctx), h.eng.AllAgents())
	return &Reply[[]*store.Record]{masked(ctx, recs)}, nil
})

var GetProcess = define(&Op[AgentIn, Reply[*store.Record]]{
	ID: "getProcess", Method: http.MethodGet, Path: "/v1/engine/processes/{project}/{agent}", Access: OwnedOrSelf, Reveal: true,
	Summary: "One agent of a loaded project, with its CPU and memory",
}, func(h *handler, ctx context.Context, in *AgentIn) (*Reply[*store.Record], error) {
	for _, rec := range h.eng.AllAgents() {
		if rec != nil && rec.ProjectID == in.Project && rec.ID == in.Agent {
			return answer(ctx).record(rec, nil)
		}
	}
	// Not among the loaded projects: let the engine say what is missing.
	return answer(ctx).record(h.eng.GetAgent(in.Project, in.Agent))
})

var QuitEngine = define(&Op[NoInput, Reply[Quitting]]{
	ID: "quitEngine", Method: http.MethodPost, Path: "/v1/engine/quit", Access: UserOnly, Status: http.StatusAccepted, EmptyBody: true,
	Summary: "Ask the engine to quit (its windows close; agents keep running unless the stop-on-quit preference says otherwise)",
	after: func(h *handler, w http.ResponseWriter) {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		go h.opts.Quit()
	},
}, func(h *handler, ctx context.Context, _ *NoInput) (*Reply[Quitting], error) {
	if h.opts.Quit == nil {
		return nil, problem(http.StatusNotImplemented, "NotImplemented", "this engine cannot be asked to quit")
	}
	return &Reply[Quitting]{Quitting{PID: os.Getpid(), Quitting: true}}, nil
})

var GetWhileClosed = define(&Op[NoInput, Reply[*supervisor.WhileClosed]]{
	ID: "getWhileClosed", Method: http.MethodGet, Path: "/v1/engine/while-closed", Access: UserOnly,
	Summary: "What the engine found at its start, for every project (404 while it is still loading them)",
}, func(h *handler, ctx context.Context, _ *NoInput) (*Reply[*supervisor.WhileClosed], error) {
	wc := h.eng.WhileClosed()
	if wc == nil {
		return nil, problem(http.StatusNotFound, supervisor.KindName(supervisor.ErrNotFound), "the engine is still loading its projects")
	}
	return &Reply[*supervisor.WhileClosed]{wc}, nil
})

var GetOpenAPI = define(&Op[NoInput, Reply[json.RawMessage]]{
	ID: "getOpenAPI", Method: http.MethodGet, Path: "/v1/openapi.json", Access: AnyCaller,
	Summary: "This description of the API (OpenAPI 3.1)",
}, func(h *handler, ctx context.Context, _ *NoInput) (*Reply[json.RawMessage], error) {
	b, err := h.api.OpenAPI().MarshalJSON()
	if err != nil {
		return nil, err
	}
	return &Reply[json.RawMessage]{b}, nil
})

// Commands is the engine's lookup of a command (*supervisor.Engine has it):
// where a start would find it, with the engine's PATH — which a window
// attached to the engine does not share. An engine without it answers
// lookupCommand as if it did not exist.
type Commands interface {
	LookPath(command, cwd string) (string, error)
}

// LookupIn names the command to look up.
type LookupIn struct {
	Command string `query:"command" doc:"the command as an agent's spec gives it (a name on the PATH, or a path)"`
	Cwd     string `query:"cwd" doc:"the folder a path with a slash is relative to (the agent's working folder)"`
}

// CommandPath is the answer of lookupCommand.
type CommandPath struct {
	Path string `json:"path"`
}

var LookupCommand = define(&Op[LookupIn, Reply[CommandPath]]{
	ID: "lookupCommand", Method: http.MethodGet, Path: "/v1/commands/lookup", Access: UserOnly,
	Summary: "Where a start would find a command, with the engine's PATH (400 ValidationError when it would not)",
	Doc:     "The agent form warns about a command that is not found; it does not refuse it (the agent's own PATH may differ).",
}, func(h *handler, ctx context.Context, in *LookupIn) (*Reply[CommandPath], error) {
	c, ok := h.eng.(Commands)
	if !ok {
		return nil, noSuchEndpoint(ctx)
	}
	p, err := c.LookPath(in.Command, in.Cwd)
	if err != nil {
		return nil, err
	}
	return &Reply[CommandPath]{CommandPath{Path: p}}, nil
})
