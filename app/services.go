package app

import (
	"context"
	"errors"
	"shepherd/backend/api"
	"shepherd/backend/sandbox"
	"time"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"shepherd/backend/logfollow"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// ---------------------------------------------------------------- projects

// ProjectService is the project switcher's door to the engine.
type ProjectService struct{ a *App }

// ProjectInfo is a known project with the counts the switcher shows (the
// engine's: known only for projects it has loaded).
type ProjectInfo struct {
	store.Project
	Loaded    bool `json:"loaded"`
	Agents    int  `json:"agents"`
	Running   int  `json:"running"`
	Attention int  `json:"attention"`
	// The pause and the run queue (SPEC "Pause and resume").
	Paused       bool       `json:"paused"`
	PausedAt     *time.Time `json:"pausedAt,omitempty"`
	PauseNote    string     `json:"pauseNote,omitempty"`
	PauseProblem string     `json:"pauseProblem,omitempty"`
	Live         int        `json:"live"`
	Queued       int        `json:"queued"`
	MaxRunning   int        `json:"maxRunning"`
	// FolderMissing says why the project's folder cannot be used (it was
	// moved or deleted); its agents are still supervised.
	FolderMissing string `json:"folderMissing,omitempty"`
	// What its agents' runs cost and used, summed, and the cost of today.
	Totals    *store.RunFigures `json:"totals,omitempty"`
	CostToday float64           `json:"costToday"`
	// The daily budget (0: none), and whether today's cost reached it.
	DailyBudgetUsd float64 `json:"dailyBudgetUsd,omitempty"`
	BudgetHeld     bool    `json:"budgetHeld,omitempty"`
}

// WhileClosed is what the engine found at its start, for every project:
// agents that ended while no engine watched them (with their exit codes),
// re-attached, recovered. Nil while it is still loading.
func (s *ProjectService) WhileClosed() (*supervisor.WhileClosed, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	return e.WhileClosed(), nil
}

// List returns the known projects, oldest first, each with the engine's
// counts of its agents.
func (s *ProjectService) List() ([]ProjectInfo, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	out := []ProjectInfo{}
	for _, v := range e.ProjectViews() {
		out = append(out, ProjectInfo{Project: v.Project, Paused: v.Paused, PausedAt: v.PausedAt, PauseNote: v.PauseNote,
			PauseProblem: v.PauseProblem, Live: v.Live, Queued: v.Queued, MaxRunning: v.MaxRunning, FolderMissing: v.FolderMissing,
			Totals: v.Totals, CostToday: v.CostToday, DailyBudgetUsd: v.DailyBudgetUsd, BudgetHeld: v.BudgetHeld,
			Loaded: v.Loaded || s.a.selectedProject() == v.ID, Agents: v.Agents, Running: v.Running, Attention: v.Attention})
	}
	return out, nil
}

// Add registers a folder as a project (the same folder again returns the
// known project).
func (s *ProjectService) Add(path, name string) (store.Project, error) {
	e, err := s.a.engine()
	if err != nil {
		return store.Project{}, err
	}
	p, _, err := e.AddProject(path, name)
	return p, err
}

// PickFolder opens the native folder picker; "" when the user cancels.
func (s *ProjectService) PickFolder(title string) (string, error) {
	ctx := s.a.wailsContext()
	if ctx == nil {
		return "", errors.New("no window")
	}
	if title == "" {
		title = "Choose a folder"
	}
	return runtime.OpenDirectoryDialog(ctx, runtime.OpenDialogOptions{Title: title, CanCreateDirectories: true})
}

// Rename changes a project's display name.
func (s *ProjectService) Rename(projectID, name string) (store.Project, error) {
	e, err := s.a.engine()
	if err != nil {
		return store.Project{}, err
	}
	return e.RenameProject(projectID, name)
}

// Remove forgets a project; one with live agents needs force (which stops
// them first).
func (s *ProjectService) Remove(projectID string, force bool) error {
	e, err := s.a.engine()
	if err != nil {
		return err
	}
	s.a.Logs.unfollowProject(projectID)
	return e.RemoveProject(context.Background(), projectID, force)
}

// Pause pauses a project: nothing of it starts, and its running agents are
// paused (each at a safe point unless now). It returns once they are.
func (s *ProjectService) Pause(projectID, note string, now bool) ([]StopResult, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	res, err := e.PauseProject(context.Background(), projectID, note, now)
	return stopResults(res), err
}

// Unpause resumes a paused project: its paused agents go through the queue
// in the order they were paused.
func (s *ProjectService) Unpause(projectID string) error {
	e, err := s.a.engine()
	if err != nil {
		return err
	}
	return e.UnpauseProject(context.Background(), projectID)
}

// Select makes a project the selected one and runs its load-time sync.
func (s *ProjectService) Select(projectID string) (*supervisor.SyncSummary, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	sum, err := e.SelectProject(context.Background(), projectID)
	if err == nil {
		s.a.mu.Lock()
		s.a.selected = projectID
		s.a.mu.Unlock()
	}
	return sum, err
}

// ------------------------------------------------------------------ agents

// Agent is an agent's record as the window gets it. It is its own type, not
// store.Record, because the generated TypeScript would otherwise declare an
// interface named Record that shadows TypeScript's Record<K, V> in the same
// namespace.
type Agent store.Record

func agentOf(r *store.Record, err error) (*Agent, error) { return (*Agent)(r), err }

// StopResult is one agent's outcome of stop-all.
type StopResult struct {
	AgentID string `json:"agentId"`
	Record  *Agent `json:"record,omitempty"`
	Error   string `json:"error,omitempty"`
}

// AgentService is the agents view's door to the engine.
type AgentService struct{ a *App }

// List returns a project's agents, oldest first.
func (s *AgentService) List(projectID string) ([]*Agent, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	recs, err := e.ListAgents(projectID)
	if err != nil {
		return nil, err
	}
	out := make([]*Agent, len(recs))
	for i, r := range recs {
		out[i] = (*Agent)(r)
	}
	return out, nil
}

// Get returns one agent's record.
func (s *AgentService) Get(projectID, agentID string) (*Agent, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	return agentOf(e.GetAgent(projectID, agentID))
}

// Create adds an agent (not started).
func (s *AgentService) Create(projectID string, spec supervisor.AgentSpec) (*Agent, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	return agentOf(e.CreateAgent(projectID, spec))
}

// Update changes the user-set fields of an agent that is not live.
func (s *AgentService) Update(projectID string, spec supervisor.AgentSpec) (*Agent, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	r, err := e.UpdateAgent(projectID, spec)
	if err == nil && r == nil {
		return nil, errors.New("editing an agent is not available in this build")
	}
	return (*Agent)(r), err
}

// Start starts an agent with its args.
func (s *AgentService) Start(projectID, agentID string) (*Agent, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	return agentOf(e.StartAgent(context.Background(), projectID, agentID))
}

// Stop stops a live agent: SIGTERM, graceSec (negative: the agent's own
// grace), SIGKILL.
func (s *AgentService) Stop(projectID, agentID string, graceSec int) (*Agent, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	var grace *time.Duration
	if graceSec >= 0 {
		g := time.Duration(graceSec) * time.Second
		grace = &g
	}
	return agentOf(e.StopAgent(context.Background(), projectID, agentID, grace))
}

// Resume runs the agent's resume arguments with its session id.
func (s *AgentService) Resume(projectID, agentID string) (*Agent, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	return agentOf(e.ResumeAgent(context.Background(), projectID, agentID))
}

// Ack acknowledges what the agent needed of the user: it leaves Needs you
// until it needs them again.
func (s *AgentService) Ack(projectID, agentID string) (*Agent, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	return agentOf(e.AckAgent(projectID, agentID))
}

// Remove forgets an agent; a live one needs force. The log is kept unless
// deleteLog.
func (s *AgentService) Remove(projectID, agentID string, force, deleteLog bool) error {
	e, err := s.a.engine()
	if err != nil {
		return err
	}
	s.a.Logs.hub().Unfollow(projectID, agentID)
	return e.RemoveAgent(context.Background(), projectID, agentID, force, deleteLog)
}

// StopAll stops every live agent of a project.
func (s *AgentService) StopAll(projectID string) ([]StopResult, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	res, err := e.StopAll(context.Background(), projectID)
	return stopResults(res), err
}

func stopResults(res []supervisor.StopResult) []StopResult {
	out := make([]StopResult, len(res))
	for i, r := range res {
		out[i] = StopResult{AgentID: r.AgentID, Record: (*Agent)(r.Record), Error: r.Error}
	}
	return out
}

// Watch says the window shows a project's agents: their CPU and memory are
// sampled (pushed as agent:stats) for the next 15 s. The window calls it
// again while it shows them; nobody looking, nothing is sampled.
func (s *AgentService) Watch(projectID string) error {
	e, err := s.a.engine()
	if err != nil {
		return err
	}
	return e.Look(projectID, 15*time.Second)
}

// StatsHistory is an agent's recent CPU and memory samples (the last 5
// minutes while watched), oldest first.
func (s *AgentService) StatsHistory(projectID, agentID string) ([]store.Stats, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	return e.StatsHistory(projectID, agentID)
}

// Pause pauses one agent: a running one at a safe point (unless now), its
// session kept; a queued one leaves the queue.
func (s *AgentService) Pause(projectID, agentID string, now bool, note string) (*Agent, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	return agentOf(e.PauseAgent(context.Background(), projectID, agentID, now, note))
}

// Unpause resumes a paused agent (its session when it is resumable), through
// the queue.
func (s *AgentService) Unpause(projectID, agentID string) (*Agent, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	return agentOf(e.UnpauseAgent(context.Background(), projectID, agentID))
}

// AnswerBudget answers an agent's budget pause: "raise" the limit it
// reached to limit (0: none), resume "once" past it, or "stop".
func (s *AgentService) AnswerBudget(projectID, agentID, action string, limit float64) (*Agent, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	return agentOf(e.AnswerBudget(context.Background(), projectID, agentID, action, limit))
}

// Events returns the last limit entries of the project's events.jsonl that
// concern agentID ("" for all), oldest first.
func (s *AgentService) Events(projectID, agentID string, limit int) ([]store.Event, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 200
	}
	return e.Events(projectID, agentID, limit)
}

// LookPath tells where the engine would find command (its PATH; a command
// with a slash relative to cwd). The form uses it to warn about a missing
// command, not to refuse it: the PATH may be set later.
func (s *AgentService) LookPath(command, cwd string) (string, error) {
	e, err := s.a.engine()
	if err != nil {
		return "", err
	}
	c, ok := e.(api.Commands)
	if !ok {
		return "", errors.New("this engine does not look commands up")
	}
	return c.LookPath(command, cwd)
}

// ---------------------------------------------------------------- settings

// SettingsService reads and writes a project's settings, notification
// toggles included.
type SettingsService struct{ a *App }

// Get returns a project's settings.
func (s *SettingsService) Get(projectID string) (supervisor.Settings, error) {
	e, err := s.a.engine()
	if err != nil {
		return supervisor.Settings{}, err
	}
	return e.GetSettings(projectID)
}

// Put validates and saves a project's settings.
func (s *SettingsService) Put(projectID string, settings supervisor.Settings) (supervisor.Settings, error) {
	e, err := s.a.engine()
	if err != nil {
		return supervisor.Settings{}, err
	}
	return e.PutSettings(projectID, settings)
}

// Sandbox is what of the permission sandbox the engine's machine enforces
// (Landlock and network namespaces on Linux, sandbox-exec on macOS), for the
// settings and the agent form.
func (s *SettingsService) Sandbox() (sandbox.Support, error) {
	e, err := s.a.engine()
	if err != nil {
		return sandbox.Support{}, err
	}
	return e.SandboxSupport(), nil
}

// ------------------------------------------------------------------- logs

// LogService reads agents' logs and follows the ones the UI shows, pushing
// their new lines as batched "agent:log" events.
type LogService struct {
	a *App
}

// EventAgentLog is the event that carries a logfollow.Batch.
const EventAgentLog = "agent:log"

func (s *LogService) hub() *logfollow.Hub {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	if s.a.follow == nil {
		s.a.follow = logfollow.NewHub(func(b logfollow.Batch) { s.a.emit(EventAgentLog, b) }, 0)
	}
	return s.a.follow
}

func (s *LogService) unfollowProject(projectID string) {
	s.a.mu.Lock()
	h := s.a.follow
	s.a.mu.Unlock()
	if h == nil {
		return
	}
	e, err := s.a.engine()
	if err != nil {
		return
	}
	if recs, err := e.ListAgents(projectID); err == nil {
		for _, r := range recs {
			h.Unfollow(projectID, r.ID)
		}
	}
}

// Tail returns the last n complete lines of an agent's log (n <= 0: 2000)
// and the offset Follow continues from.
func (s *LogService) Tail(projectID, agentID string, n int) (logfollow.Chunk, error) {
	e, err := s.a.engine()
	if err != nil {
		return logfollow.Chunk{}, err
	}
	r, err := e.GetAgent(projectID, agentID)
	if err != nil {
		return logfollow.Chunk{}, err
	}
	if n <= 0 {
		n = 2000
	}
	return logfollow.Tail(r.LogPath, n)
}

// Follow pushes the lines written to an agent's log past offset as
// "agent:log" events, about every 100 ms, until Unfollow.
func (s *LogService) Follow(projectID, agentID string, offset int64) error {
	e, err := s.a.engine()
	if err != nil {
		return err
	}
	r, err := e.GetAgent(projectID, agentID)
	if err != nil {
		return err
	}
	s.hub().Follow(projectID, agentID, r.LogPath, offset)
	return nil
}

// Unfollow stops pushing an agent's log.
func (s *LogService) Unfollow(projectID, agentID string) {
	s.hub().Unfollow(projectID, agentID)
}
