package api

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"shepherd/backend/jsonone"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// Projects: the folders the engine knows, each with its agents' settings,
// its pause and its history of events.

// ProjectInput is the body of POST /v1/projects (and of a rename).
type ProjectInput struct {
	Path string `json:"path,omitempty" doc:"the project's folder (absolute); a project's path cannot change"`
	Name string `json:"name,omitempty" doc:"its display name (default: the folder's name)"`
}

// PauseInput is the optional body of POST …/pause.
type PauseInput struct {
	Note string `json:"note,omitempty" doc:"why (shown with the pause)"`
	Now  bool   `json:"now,omitempty" doc:"true: do not wait for a tool call in flight to finish"`
}

// ProjectRemoved is the answer of DELETE /v1/projects/{project}.
type ProjectRemoved struct {
	ProjectID string `json:"projectId"`
	Removed   bool   `json:"removed"`
}

// AddProjectIn is the input of addProject.
type AddProjectIn struct {
	Body ProjectInput
}

// RenameProjectIn is the input of renameProject.
type RenameProjectIn struct {
	Project string `path:"project" doc:"the project's id"`
	Body    ProjectInput
}

// RemoveProjectIn is the input of removeProject.
type RemoveProjectIn struct {
	Project string `path:"project" doc:"the project's id"`
	Force   bool   `query:"force" doc:"true: stop its running agents first"`
}

// PauseProjectIn is the input of pauseProject.
type PauseProjectIn struct {
	Project string `path:"project" doc:"the project's id"`
	Body    *PauseInput
}

// PutSettingsIn is the input of putSettings.
type PutSettingsIn struct {
	Project string `path:"project" doc:"the project's id"`
	Body    supervisor.Settings
}

// EventsIn is the input of listEvents.
type EventsIn struct {
	Project string `path:"project" doc:"the project's id"`
	Agent   string `query:"agent" doc:"only this agent's events"`
	Limit   int    `query:"limit" minimum:"0" doc:"only the last N (0: all)"`
}

// Events is an NDJSON answer: one store.Event a line, oldest first.
type Events struct {
	ContentType string `header:"Content-Type"`
	Body        []byte
}

var ListProjects = define(&Op[NoInput, Reply[[]supervisor.ProjectView]]{
	ID: "listProjects", Method: http.MethodGet, Path: "/v1/projects", Access: AnyCaller,
	Summary: "Every known project with its state (pause, queue, counts, cost); an agent sees its own",
}, func(h *handler, ctx context.Context, _ *NoInput) (*Reply[[]supervisor.ProjectView], error) {
	ps := h.eng.ProjectViews()
	if c := callerIn(ctx); !c.User {
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
	return &Reply[[]supervisor.ProjectView]{ps}, nil
})

var AddProject = define(&Op[AddProjectIn, Created[store.Project]]{
	ID: "addProject", Method: http.MethodPost, Path: "/v1/projects", Access: UserOnly, Status: http.StatusCreated,
	Summary: "Add a project folder (201); the same folder again answers the known project (200)",
	document: func(op *huma.Operation, reg huma.Registry) {
		op.Responses = map[string]*huma.Response{"200": {Description: "already known",
			Content: map[string]*huma.MediaType{"application/json": {Schema: reg.Schema(reflect.TypeFor[store.Project](), true, "")}}}}
	},
}, func(h *handler, ctx context.Context, in *AddProjectIn) (*Created[store.Project], error) {
	if strings.TrimSpace(in.Body.Path) == "" {
		return nil, problem(http.StatusBadRequest, "ValidationError", `field "path" is required`)
	}
	p, created, err := h.eng.AddProject(in.Body.Path, in.Body.Name)
	if err != nil {
		return nil, err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return &Created[store.Project]{Status: status, Body: p}, nil
})

var GetProject = define(&Op[ProjectIn, Reply[supervisor.ProjectView]]{
	ID: "getProject", Method: http.MethodGet, Path: projectPath, Access: InProject,
	Summary: "One project with its state",
}, func(h *handler, ctx context.Context, in *ProjectIn) (*Reply[supervisor.ProjectView], error) {
	v, err := h.eng.ProjectState(in.Project)
	return &Reply[supervisor.ProjectView]{v}, err
})

var RenameProject = define(&Op[RenameProjectIn, Reply[store.Project]]{
	ID: "renameProject", Method: http.MethodPatch, Path: projectPath, Access: UserOnly,
	Summary: "Change a project's display name",
}, func(h *handler, ctx context.Context, in *RenameProjectIn) (*Reply[store.Project], error) {
	if in.Body.Path != "" {
		return nil, problem(http.StatusBadRequest, "ValidationError", "a project's path cannot change; add the new folder as a project")
	}
	p, err := h.eng.RenameProject(in.Project, in.Body.Name)
	return &Reply[store.Project]{p}, err
})

var RemoveProject = define(&Op[RemoveProjectIn, Reply[ProjectRemoved]]{
	ID: "removeProject", Method: http.MethodDelete, Path: projectPath, Access: UserOnly,
	Summary: "Forget a project; one with running agents needs force (which stops them first)",
}, func(h *handler, ctx context.Context, in *RemoveProjectIn) (*Reply[ProjectRemoved], error) {
	if err := h.eng.RemoveProject(ctx, in.Project, in.Force); err != nil {
		return nil, err
	}
	return &Reply[ProjectRemoved]{ProjectRemoved{ProjectID: in.Project, Removed: true}}, nil
})

var SelectProject = define(&Op[ProjectIn, Reply[*supervisor.SyncSummary]]{
	ID: "selectProject", Method: http.MethodPost, Path: projectPath + "/select", Access: UserOnly, EmptyBody: true,
	Summary: "Load a project: check every agent against reality and say what was found",
}, func(h *handler, ctx context.Context, in *ProjectIn) (*Reply[*supervisor.SyncSummary], error) {
	sum, err := h.eng.SelectProject(ctx, in.Project)
	return &Reply[*supervisor.SyncSummary]{sum}, err
})

var StopAll = define(&Op[ProjectIn, Reply[[]supervisor.StopResult]]{
	ID: "stopAll", Method: http.MethodPost, Path: projectPath + "/stop-all", Access: UserOnly, EmptyBody: true, Reveal: true,
	Summary: "Stop every running agent of a project",
}, func(h *handler, ctx context.Context, in *ProjectIn) (*Reply[[]supervisor.StopResult], error) {
	res, err := h.eng.StopAll(ctx, in.Project)
	return &Reply[[]supervisor.StopResult]{masked(ctx, res)}, err
})

var PauseProject = define(&Op[PauseProjectIn, Reply[[]supervisor.StopResult]]{
	ID: "pauseProject", Method: http.MethodPost, Path: projectPath + "/pause", Access: UserOnly, Reveal: true,
	Summary: "Pause a project: nothing of it starts, its running agents are paused (at a safe point unless now)",
}, func(h *handler, ctx context.Context, in *PauseProjectIn) (*Reply[[]supervisor.StopResult], error) {
	var p PauseInput
	if in.Body != nil {
		p = *in.Body
	}
	res, err := h.eng.PauseProject(ctx, in.Project, p.Note, p.Now)
	return &Reply[[]supervisor.StopResult]{masked(ctx, res)}, err
})

var UnpauseProject = define(&Op[ProjectIn, Reply[supervisor.ProjectView]]{
	ID: "unpauseProject", Method: http.MethodPost, Path: projectPath + "/unpause", Access: UserOnly, EmptyBody: true,
	Summary: "Resume a paused project: its paused agents go through the queue",
}, func(h *handler, ctx context.Context, in *ProjectIn) (*Reply[supervisor.ProjectView], error) {
	if err := h.eng.UnpauseProject(ctx, in.Project); err != nil {
		return nil, err
	}
	v, err := h.eng.ProjectState(in.Project)
	return &Reply[supervisor.ProjectView]{v}, err
})

var GetSettings = define(&Op[ProjectIn, Reply[supervisor.Settings]]{
	ID: "getSettings", Method: http.MethodGet, Path: projectPath + "/settings", Access: UserOnly,
	Summary: "A project's settings",
}, func(h *handler, ctx context.Context, in *ProjectIn) (*Reply[supervisor.Settings], error) {
	s, err := h.eng.GetSettings(in.Project)
	return &Reply[supervisor.Settings]{s}, err
})

var PutSettings = define(&Op[PutSettingsIn, Reply[supervisor.Settings]]{
	ID: "putSettings", Method: http.MethodPut, Path: projectPath + "/settings", Access: UserOnly,
	Summary: "Change a project's settings: the fields given (those left out keep their values)",
}, func(h *handler, ctx context.Context, in *PutSettingsIn) (*Reply[supervisor.Settings], error) {
	s, err := h.eng.GetSettings(in.Project)
	if err != nil {
		return nil, err
	}
	// The fields given over the current values (the body passed the strict
	// check already).
	given, _ := ctx.Value(bodyKey{}).([]byte)
	if err := jsonone.Decode(given, &s, true); err != nil {
		return nil, problem(http.StatusBadRequest, "ValidationError", describeJSONError(err))
	}
	s, err = h.eng.PutSettings(in.Project, s)
	return &Reply[supervisor.Settings]{s}, err
})

var ListEvents = define(&Op[EventsIn, Events]{
	ID: "listEvents", Method: http.MethodGet, Path: projectPath + "/events", Access: UserOnly,
	Summary: "The project's events.jsonl as NDJSON, oldest first",
	document: func(op *huma.Operation, reg huma.Registry) {
		op.Responses = map[string]*huma.Response{"200": {Description: "one event a line",
			Content: map[string]*huma.MediaType{"application/x-ndjson": {Schema: reg.Schema(reflect.TypeFor[store.Event](), true, "")}}}}
	},
}, func(h *handler, ctx context.Context, in *EventsIn) (*Events, error) {
	evs, err := h.eng.Events(in.Project, in.Agent, in.Limit)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, ev := range evs {
		_ = enc.Encode(ev)
	}
	return &Events{ContentType: "application/x-ndjson", Body: []byte(b.String())}, nil
})
