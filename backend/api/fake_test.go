package api_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"shepherd/backend/sandbox"
	"strings"
	"sync"
	"time"

	"shepherd/backend/api"
	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// The real engine is what the API serves.
var _ api.Engine = (*supervisor.Engine)(nil)

// fakeEngine stands in for the engine in tests of the HTTP mapping only: it
// records each call and answers with canned values, or with err when set.
type fakeEngine struct {
	mu    sync.Mutex
	calls []string
	err   error // returned by every method that can fail

	projects []store.Project
	created  bool // AddProject's answer
	agents   []*store.Record
	specs    []supervisor.AgentSpec
	grace    *time.Duration
	force    bool
	delLog   bool
	tailN    int
	logData  []byte
	events   string // events.jsonl path
}

func newFake(dir string) *fakeEngine {
	log := filepath.Join(dir, "a1.log")
	_ = os.WriteFile(log, []byte("one\ntwo\nthree\n"), 0o600)
	ev := filepath.Join(dir, "events.jsonl")
	_ = os.WriteFile(ev, []byte(`{"event":"agent:state","agentId":"a1","from":"not_started","to":"spawning"}`+"\n"), 0o600)
	return &fakeEngine{
		projects: []store.Project{{ID: "p1", Name: "demo", Path: dir}},
		created:  true,
		agents: []*store.Record{{ID: "a1", ProjectID: "p1", Command: "sleep", Args: []string{"100"},
			Status: lifecycle.Running, PID: 4242, LogPath: log}},
		logData: []byte("three\n"),
		events:  ev,
	}
}

func (f *fakeEngine) call(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name)
	return f.err
}

func (f *fakeEngine) called(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if c == name {
			return true
		}
	}
	return false
}

func (f *fakeEngine) Projects() []store.Project { f.call("Projects"); return f.projects }

func (f *fakeEngine) Alerts() []supervisor.Alert { return []supervisor.Alert{} }

func (f *fakeEngine) SandboxSupport() sandbox.Support {
	return sandbox.Support{OS: "linux", Landlock: true, LandlockABI: 7, NetNS: true}
}

func (f *fakeEngine) AddProject(path, name string) (store.Project, bool, error) {
	if err := f.call("AddProject"); err != nil {
		return store.Project{}, false, err
	}
	return store.Project{ID: "p2", Name: name, Path: path}, f.created, nil
}

func (f *fakeEngine) SelectProject(ctx context.Context, id string) (*supervisor.SyncSummary, error) {
	if err := f.call("SelectProject"); err != nil {
		return nil, err
	}
	return &supervisor.SyncSummary{ProjectID: id, Total: 1, Counts: map[string]int{"reattached": 1}}, nil
}

func (f *fakeEngine) ListAgents(projectID string) ([]*store.Record, error) {
	if err := f.call("ListAgents"); err != nil {
		return nil, err
	}
	return f.agents, nil
}

func (f *fakeEngine) GetAgent(projectID, agentID string) (*store.Record, error) {
	if err := f.call("GetAgent"); err != nil {
		return nil, err
	}
	for _, a := range f.agents {
		if a.ProjectID == projectID && a.ID == agentID {
			return a, nil
		}
	}
	return nil, &supervisor.Error{Kind: supervisor.ErrNotFound, Message: "Process '" + agentID + "' not found"}
}

func (f *fakeEngine) CreateAgent(projectID string, spec supervisor.AgentSpec) (*store.Record, error) {
	if err := f.call("CreateAgent"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.specs = append(f.specs, spec)
	f.mu.Unlock()
	return &store.Record{ID: spec.ID, ProjectID: projectID, Command: spec.Command, Args: spec.Args,
		Status: lifecycle.NotStarted}, nil
}

func (f *fakeEngine) StartAgent(ctx context.Context, projectID, agentID string) (*store.Record, error) {
	if err := f.call("StartAgent"); err != nil {
		return nil, err
	}
	return &store.Record{ID: agentID, ProjectID: projectID, Status: lifecycle.Running, PID: 99}, nil
}

func (f *fakeEngine) StopAgent(ctx context.Context, projectID, agentID string, grace *time.Duration) (*store.Record, error) {
	if err := f.call("StopAgent"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.grace = grace
	f.mu.Unlock()
	return &store.Record{ID: agentID, ProjectID: projectID, Status: lifecycle.Stopped,
		ExitReason: lifecycle.ReasonStoppedByUser}, nil
}

func (f *fakeEngine) StopAll(ctx context.Context, projectID string) ([]supervisor.StopResult, error) {
	if err := f.call("StopAll"); err != nil {
		return nil, err
	}
	return []supervisor.StopResult{{AgentID: "a1"}}, nil
}

func (f *fakeEngine) RemoveAgent(ctx context.Context, projectID, agentID string, force, deleteLog bool) error {
	if err := f.call("RemoveAgent"); err != nil {
		return err
	}
	f.mu.Lock()
	f.force, f.delLog = force, deleteLog
	f.mu.Unlock()
	return nil
}

func (f *fakeEngine) LogTail(projectID, agentID string, n int) ([]byte, error) {
	if err := f.call("LogTail"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.tailN = n
	f.mu.Unlock()
	return f.logData, nil
}

func (f *fakeEngine) Events(projectID, agentID string, limit int) ([]store.Event, error) {
	if err := f.call("Events"); err != nil {
		return nil, err
	}
	b, _ := os.ReadFile(f.events)
	out := []store.Event{}
	for _, line := range strings.Split(string(b), "\n") {
		var ev store.Event
		if json.Unmarshal([]byte(line), &ev) == nil && (agentID == "" || ev.AgentID == agentID) {
			out = append(out, ev)
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

func (f *fakeEngine) ProjectViews() []supervisor.ProjectView {
	f.call("ProjectViews")
	var out []supervisor.ProjectView
	for _, p := range f.projects {
		out = append(out, supervisor.ProjectView{Project: p})
	}
	return out
}

func (f *fakeEngine) ProjectState(projectID string) (supervisor.ProjectView, error) {
	if err := f.call("ProjectState"); err != nil {
		return supervisor.ProjectView{}, err
	}
	return supervisor.ProjectView{Project: f.projects[0]}, nil
}

func (f *fakeEngine) PauseProject(ctx context.Context, projectID, note string, now bool) ([]supervisor.StopResult, error) {
	return nil, f.call("PauseProject")
}

func (f *fakeEngine) UnpauseProject(ctx context.Context, projectID string) error {
	return f.call("UnpauseProject")
}

func (f *fakeEngine) PauseAgent(ctx context.Context, projectID, agentID string, now bool, note string) (*store.Record, error) {
	if err := f.call("PauseAgent"); err != nil {
		return nil, err
	}
	return f.agents[0], nil
}

func (f *fakeEngine) UnpauseAgent(ctx context.Context, projectID, agentID string) (*store.Record, error) {
	if err := f.call("UnpauseAgent"); err != nil {
		return nil, err
	}
	return f.agents[0], nil
}

func (f *fakeEngine) AnswerBudget(ctx context.Context, projectID, agentID, action string, limit float64) (*store.Record, error) {
	if err := f.call("AnswerBudget"); err != nil {
		return nil, err
	}
	return f.agents[0], nil
}

func (f *fakeEngine) Look(projectID string, d time.Duration) error { return f.call("Look") }
func (f *fakeEngine) StatsNow(projectID string) error              { return f.call("StatsNow") }
func (f *fakeEngine) StatsHistory(projectID, agentID string) ([]store.Stats, error) {
	return []store.Stats{}, f.call("StatsHistory")
}

func (f *fakeEngine) AllAgents() []*store.Record { f.call("AllAgents"); return f.agents }

func (f *fakeEngine) ResumeAgent(ctx context.Context, projectID, agentID string) (*store.Record, error) {
	if err := f.call("ResumeAgent"); err != nil {
		return nil, err
	}
	return &store.Record{ID: agentID, ProjectID: projectID, Status: lifecycle.Running}, nil
}

func (f *fakeEngine) AckAgent(projectID, agentID string) (*store.Record, error) {
	if err := f.call("AckAgent"); err != nil {
		return nil, err
	}
	return &store.Record{ID: agentID, ProjectID: projectID, Status: lifecycle.Failed}, nil
}

func (f *fakeEngine) WhileClosed() *supervisor.WhileClosed {
	f.call("WhileClosed")
	return &supervisor.WhileClosed{Projects: []supervisor.SyncSummary{}}
}

func (f *fakeEngine) UpdateAgent(projectID string, spec supervisor.AgentSpec) (*store.Record, error) {
	if err := f.call("UpdateAgent"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.specs = append(f.specs, spec)
	f.mu.Unlock()
	return &store.Record{ID: spec.ID, ProjectID: projectID, Command: spec.Command}, nil
}

func (f *fakeEngine) GetSettings(projectID string) (supervisor.Settings, error) {
	if err := f.call("GetSettings"); err != nil {
		return supervisor.Settings{}, err
	}
	return supervisor.DefaultSettings(), nil
}

func (f *fakeEngine) PutSettings(projectID string, s supervisor.Settings) (supervisor.Settings, error) {
	if err := f.call("PutSettings"); err != nil {
		return supervisor.Settings{}, err
	}
	return s, nil
}

func (f *fakeEngine) RenameProject(projectID, name string) (store.Project, error) {
	if err := f.call("RenameProject"); err != nil {
		return store.Project{}, err
	}
	return store.Project{ID: projectID, Name: name}, nil
}

func (f *fakeEngine) RemoveProject(ctx context.Context, projectID string, force bool) error {
	f.mu.Lock()
	f.force = force
	f.mu.Unlock()
	return f.call("RemoveProject")
}
