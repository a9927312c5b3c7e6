package app

import (
	"context"
	"errors"

	"shepherd/backend/api"
	"shepherd/backend/presets"
	"shepherd/backend/supervisor"
	"shepherd/backend/workspace"
)

// worktrees is the engine's worktree side (the embedded engine and a remote
// one both have it).
func (s *AgentService) worktrees() (api.Worktrees, error) {
	e, err := s.a.engine()
	if err != nil {
		return nil, err
	}
	w, ok := e.(api.Worktrees)
	if !ok {
		return nil, errors.New("this engine has no worktree agents")
	}
	return w, nil
}

// Diff is a worktree agent's changes against its base.
func (s *AgentService) Diff(projectID, agentID string) (*workspace.Diff, error) {
	w, err := s.worktrees()
	if err != nil {
		return nil, err
	}
	return w.AgentDiff(context.Background(), projectID, agentID)
}

// RefreshWorktree looks at a worktree agent's worktree again (pushes
// agent:worktree).
func (s *AgentService) RefreshWorktree(projectID, agentID string) (supervisor.WorktreeView, error) {
	w, err := s.worktrees()
	if err != nil {
		return supervisor.WorktreeView{}, err
	}
	return w.RefreshWorktree(context.Background(), projectID, agentID)
}

// RemoveWorktree removes an agent and ends its worktree as worktree says
// (keep, merge or discard); discardChanges lets uncommitted changes go.
func (s *AgentService) RemoveWorktree(projectID, agentID string, force, deleteLog bool, worktree string, discardChanges bool) error {
	w, err := s.worktrees()
	if err != nil {
		return err
	}
	s.a.Logs.hub().Unfollow(projectID, agentID)
	return w.Remove(context.Background(), projectID, agentID, supervisor.RemoveOptions{
		Force: force, DeleteLog: deleteLog, Worktree: worktree, DiscardChanges: discardChanges})
}

// WorktreeByDefault tells the agent form whether a preset agent of this
// project runs in a worktree unless unticked: when the project is a git
// repository.
func (s *AgentService) WorktreeByDefault(projectID string) (bool, error) {
	e, err := s.a.engine()
	if err != nil {
		return false, err
	}
	for _, p := range e.Projects() {
		if p.ID == projectID {
			return presets.WorktreeByDefault(p.Path), nil
		}
	}
	return false, nil
}
