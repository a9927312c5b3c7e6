package app

import (
	"context"
	"errors"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"shepherd/backend/api"
	"shepherd/backend/logfollow"
	"shepherd/backend/presets"
)

// What the window does itself, beside the engine's API (App.Call): the
// native folder picker, its preferences, and following the log of the agent
// it shows.

// ProjectService holds the project switcher's native picker.
type ProjectService struct{ a *App }

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

// AgentService holds what the agent form asks beside the engine's API.
type AgentService struct{ a *App }

// WorktreeByDefault tells the agent form whether a preset agent of this
// project runs in a worktree unless unticked: when the project is a git
// repository.
func (s *AgentService) WorktreeByDefault(projectID string) (bool, error) {
	c, host, err := s.a.hostClient()
	if err != nil {
		return false, err
	}
	if host != "" {
		return false, nil // its folder is on the host: ticked by the user
	}
	p, err := api.Call(context.Background(), c, api.GetProject, api.ProjectIn{Project: projectID})
	if err != nil {
		return false, nil
	}
	return presets.WorktreeByDefault(p.Body.Path), nil
}

// SettingsService holds the app's own preferences (prefs.go).
type SettingsService struct{ a *App }

// LogService follows the log of the agent the window shows, pushing its new
// lines as batched "agent:log" events.
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

// unfollowProject stops following the logs of a project's agents.
func (s *LogService) unfollowProject(projectID string) {
	s.a.mu.Lock()
	h := s.a.follow
	s.a.mu.Unlock()
	if h == nil {
		return
	}
	c, err := s.a.client()
	if err != nil {
		return
	}
	if recs, err := api.Call(context.Background(), c, api.ListAgents, api.ListAgentsIn{Project: projectID}); err == nil {
		for _, r := range recs.Body {
			h.Unfollow(projectID, r.ID)
		}
	}
}

// logPath is where an agent's log is.
func (s *LogService) logPath(projectID, agentID string) (string, error) {
	c, err := s.a.client()
	if err != nil {
		return "", err
	}
	r, err := api.Call(context.Background(), c, api.GetAgent, api.AgentIn{Project: projectID, Agent: agentID})
	if err != nil {
		return "", err
	}
	return r.Body.LogPath, nil
}

// Tail returns the last n complete lines of an agent's log (n <= 0: 2000)
// and the offset Follow continues from.
func (s *LogService) Tail(projectID, agentID string, n int) (logfollow.Chunk, error) {
	if n <= 0 {
		n = 2000
	}
	if c, host, err := s.a.hostClient(); err == nil && host != "" {
		return hostTail(c, projectID, agentID, n)
	}
	path, err := s.logPath(projectID, agentID)
	if err != nil {
		return logfollow.Chunk{}, err
	}
	return logfollow.Tail(path, n)
}

// Follow pushes the lines written to an agent's log past offset as
// "agent:log" events, about every 100 ms, until Unfollow.
func (s *LogService) Follow(projectID, agentID string, offset int64) error {
	if c, host, err := s.a.hostClient(); err == nil && host != "" {
		s.followHost(c, projectID, agentID, offset)
		return nil
	}
	path, err := s.logPath(projectID, agentID)
	if err != nil {
		return err
	}
	s.hub().Follow(projectID, agentID, path, offset)
	return nil
}

// Unfollow stops pushing an agent's log.
func (s *LogService) Unfollow(projectID, agentID string) {
	if _, host, err := s.a.hostClient(); err == nil && host != "" {
		s.unfollowHost(host, projectID, agentID)
		return
	}
	s.hub().Unfollow(projectID, agentID)
}
