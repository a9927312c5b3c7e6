package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"shepherd/backend/sandbox"
	"strconv"
	"strings"
	"time"

	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// Remote is the Engine interface over a running engine's HTTP API: what
// the window uses when another engine (`shepherd serve`, or a window
// already open) owns the data folder. Errors the engine answers come back
// as the same kinds the in-process engine returns (errors.Is works), with
// the engine's message.
type Remote struct {
	c *Client
}

// NewRemote returns an Engine that talks to the engine info describes.
func NewRemote(info EngineInfo) *Remote { return &Remote{c: NewClient(info)} }

// Client is the HTTP client underneath (for the event stream).
func (r *Remote) Client() *Client { return r.c }

var _ Engine = (*Remote)(nil)

// kindOf maps an API error name back to the engine's error kind.
func kindOf(err error) error {
	ae, ok := err.(*Error)
	if !ok {
		return err
	}
	for _, k := range supervisor.Kinds {
		if k.Error() == ae.Name {
			return &supervisor.Error{Kind: k, Message: ae.Message}
		}
	}
	return err
}

// call sends one request. The window is the user's own trusted client: it
// asks for secret values as they are (?reveal=true) and masks them itself.
func (r *Remote) call(ctx context.Context, method, path string, body, out any) error {
	_, err := r.c.JSON(ctx, method, withReveal(path), body, out)
	return kindOf(err)
}

func withReveal(path string) string {
	if strings.Contains(path, "?") {
		return path + "&reveal=true"
	}
	return path + "?reveal=true"
}

func projectPath(p string, rest ...string) string {
	s := "/v1/projects/" + url.PathEscape(p)
	for _, r := range rest {
		s += "/" + r
	}
	return s
}

func agentPath(p, a string, rest ...string) string {
	return projectPath(p, append([]string{"agents", url.PathEscape(a)}, rest...)...)
}

var bg = context.Background()

func (r *Remote) Projects() []store.Project {
	var ps []store.Project
	_ = r.call(bg, http.MethodGet, "/v1/projects", nil, &ps)
	return ps
}

func (r *Remote) AddProject(path, name string) (store.Project, bool, error) {
	resp, err := r.c.Do(bg, http.MethodPost, "/v1/projects", ProjectInput{Path: path, Name: name})
	if err != nil {
		return store.Project{}, false, kindOf(err)
	}
	var p store.Project
	if err := json.Unmarshal(resp.Body, &p); err != nil {
		return store.Project{}, false, err
	}
	return p, resp.Status == http.StatusCreated, nil
}

func (r *Remote) SelectProject(ctx context.Context, id string) (*supervisor.SyncSummary, error) {
	var s supervisor.SyncSummary
	if err := r.call(ctx, http.MethodPost, projectPath(id, "select"), nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

func (r *Remote) ListAgents(projectID string) ([]*store.Record, error) {
	var recs []*store.Record
	return recs, r.call(bg, http.MethodGet, projectPath(projectID, "agents"), nil, &recs)
}

func (r *Remote) GetAgent(projectID, agentID string) (*store.Record, error) {
	var rec store.Record
	if err := r.call(bg, http.MethodGet, agentPath(projectID, agentID), nil, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

func (r *Remote) recordCall(ctx context.Context, method, path string, body any) (*store.Record, error) {
	var rec store.Record
	if err := r.call(ctx, method, path, body, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

func (r *Remote) CreateAgent(projectID string, spec supervisor.AgentSpec) (*store.Record, error) {
	return r.recordCall(bg, http.MethodPost, projectPath(projectID, "agents"), spec)
}

func (r *Remote) StartAgent(ctx context.Context, projectID, agentID string) (*store.Record, error) {
	return r.recordCall(ctx, http.MethodPost, agentPath(projectID, agentID, "start"), nil)
}

func (r *Remote) StopAgent(ctx context.Context, projectID, agentID string, grace *time.Duration) (*store.Record, error) {
	var in StopInput
	if grace != nil {
		g := int(grace.Seconds())
		in.GraceSec = &g
	}
	return r.recordCall(ctx, http.MethodPost, agentPath(projectID, agentID, "stop"), in)
}

func (r *Remote) StopAll(ctx context.Context, projectID string) ([]supervisor.StopResult, error) {
	var res []supervisor.StopResult
	return res, r.call(ctx, http.MethodPost, projectPath(projectID, "stop-all"), nil, &res)
}

func (r *Remote) RemoveAgent(ctx context.Context, projectID, agentID string, force, deleteLog bool) error {
	q := "?force=" + strconv.FormatBool(force) + "&deleteLog=" + strconv.FormatBool(deleteLog)
	return r.call(ctx, http.MethodDelete, agentPath(projectID, agentID)+q, nil, nil)
}

func (r *Remote) LogTail(projectID, agentID string, n int) ([]byte, error) {
	resp, err := r.c.Do(bg, http.MethodGet, agentPath(projectID, agentID, "log")+"?tail="+strconv.Itoa(n), nil)
	if err != nil {
		return nil, kindOf(err)
	}
	return resp.Body, nil
}

func (r *Remote) Events(projectID, agentID string, limit int) ([]store.Event, error) {
	q := url.Values{}
	if agentID != "" {
		q.Set("agent", agentID)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	resp, err := r.c.Do(bg, http.MethodGet, projectPath(projectID, "events")+"?"+q.Encode(), nil)
	if err != nil {
		return nil, kindOf(err)
	}
	out := []store.Event{}
	for _, line := range strings.Split(string(resp.Body), "\n") {
		var ev store.Event
		if line != "" && json.Unmarshal([]byte(line), &ev) == nil {
			out = append(out, ev)
		}
	}
	return out, nil
}

func (r *Remote) AllAgents() []*store.Record {
	var recs []*store.Record
	_ = r.call(bg, http.MethodGet, "/v1/engine/processes", nil, &recs)
	return recs
}

func (r *Remote) ResumeAgent(ctx context.Context, projectID, agentID string) (*store.Record, error) {
	return r.recordCall(ctx, http.MethodPost, agentPath(projectID, agentID, "resume"), nil)
}

func (r *Remote) AckAgent(projectID, agentID string) (*store.Record, error) {
	return r.recordCall(bg, http.MethodPost, agentPath(projectID, agentID, "ack"), nil)
}

func (r *Remote) WhileClosed() *supervisor.WhileClosed {
	var wc supervisor.WhileClosed
	if err := r.call(bg, http.MethodGet, "/v1/engine/while-closed", nil, &wc); err != nil {
		return nil
	}
	return &wc
}

func (r *Remote) UpdateAgent(projectID string, spec supervisor.AgentSpec) (*store.Record, error) {
	return r.recordCall(bg, http.MethodPut, agentPath(projectID, spec.ID), spec)
}

func (r *Remote) GetSettings(projectID string) (supervisor.Settings, error) {
	var s supervisor.Settings
	return s, r.call(bg, http.MethodGet, projectPath(projectID, "settings"), nil, &s)
}

func (r *Remote) PutSettings(projectID string, s supervisor.Settings) (supervisor.Settings, error) {
	var out supervisor.Settings
	return out, r.call(bg, http.MethodPut, projectPath(projectID, "settings"), s, &out)
}

func (r *Remote) RenameProject(projectID, name string) (store.Project, error) {
	var p store.Project
	return p, r.call(bg, http.MethodPatch, projectPath(projectID), ProjectInput{Name: name}, &p)
}

func (r *Remote) RemoveProject(ctx context.Context, projectID string, force bool) error {
	return r.call(ctx, http.MethodDelete, projectPath(projectID)+"?force="+strconv.FormatBool(force), nil, nil)
}

func (r *Remote) ProjectViews() []supervisor.ProjectView {
	var vs []supervisor.ProjectView
	_ = r.call(bg, http.MethodGet, "/v1/projects", nil, &vs)
	return vs
}

func (r *Remote) ProjectState(projectID string) (supervisor.ProjectView, error) {
	var v supervisor.ProjectView
	return v, r.call(bg, http.MethodGet, projectPath(projectID), nil, &v)
}

func (r *Remote) PauseProject(ctx context.Context, projectID, note string, now bool) ([]supervisor.StopResult, error) {
	var res []supervisor.StopResult
	return res, r.call(ctx, http.MethodPost, projectPath(projectID, "pause"), PauseInput{Note: note, Now: now}, &res)
}

func (r *Remote) UnpauseProject(ctx context.Context, projectID string) error {
	return r.call(ctx, http.MethodPost, projectPath(projectID, "unpause"), nil, nil)
}

func (r *Remote) PauseAgent(ctx context.Context, projectID, agentID string, now bool, note string) (*store.Record, error) {
	return r.recordCall(ctx, http.MethodPost, agentPath(projectID, agentID, "pause"), PauseInput{Note: note, Now: now})
}

func (r *Remote) UnpauseAgent(ctx context.Context, projectID, agentID string) (*store.Record, error) {
	return r.recordCall(ctx, http.MethodPost, agentPath(projectID, agentID, "unpause"), nil)
}

func (r *Remote) AnswerBudget(ctx context.Context, projectID, agentID, action string, limit float64) (*store.Record, error) {
	return r.recordCall(ctx, http.MethodPost, agentPath(projectID, agentID, "budget"), BudgetInput{Action: action, Limit: limit})
}

func (r *Remote) Look(projectID string, d time.Duration) error {
	// Asking for the stats is the look; its lease is the engine's default.
	return r.call(bg, http.MethodGet, projectPath(projectID, "agents")+"?stats=true", nil, nil)
}

func (r *Remote) StatsNow(projectID string) error { return r.Look(projectID, 0) }

func (r *Remote) StatsHistory(projectID, agentID string) ([]store.Stats, error) {
	var hist []store.Stats
	return hist, r.call(bg, http.MethodGet, agentPath(projectID, agentID, "stats"), nil, &hist)
}

// SandboxSupport is what the engine's machine enforces of the sandbox
// (zero when it does not answer).
func (r *Remote) SandboxSupport() sandbox.Support {
	st, err := r.Status(bg)
	if err != nil || st.Sandbox == nil {
		return sandbox.Support{}
	}
	return *st.Sandbox
}

// Alerts are the engine's own alerts (none when it does not answer).
func (r *Remote) Alerts() []supervisor.Alert {
	st, err := r.Status(bg)
	if err != nil || st.Alerts == nil {
		return []supervisor.Alert{}
	}
	return st.Alerts
}

// Status asks the engine who it is (a cheap liveness check).
func (r *Remote) Status(ctx context.Context) (EngineStatus, error) {
	var st EngineStatus
	if err := r.call(ctx, http.MethodGet, "/v1/engine", nil, &st); err != nil {
		return st, fmt.Errorf("the engine does not answer: %w", err)
	}
	return st, nil
}

// Whoami asks the engine who this client is to it: the user, or the agent
// whose credential it holds.
func (r *Remote) Whoami(ctx context.Context) (Whoami, error) {
	var w Whoami
	return w, r.call(ctx, http.MethodGet, "/v1/whoami", nil, &w)
}
