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
// (keep, merge or discard); discardChanges lets uncommitted changes go
// (keep, discard); a merge commits them first with message (empty: the
// default message).
func (s *AgentService) RemoveWorktree(projectID, agentID string, force, deleteLog bool, worktree string, discardChanges bool, message string) error {
	w, err := s.worktrees()
	if err != nil {
		return err
	}
	s.a.Logs.hub().Unfollow(projectID, agentID)
	return w.Remove(context.Background(), projectID, agentID, supervisor.RemoveOptions{
		Force: force, DeleteLog: deleteLog, Worktree: worktree, DiscardChanges: discardChanges, Message: message})
}

// MergePlan says what merging a worktree agent's work would do: what is
// committed first, the default message, as whom, what stands in the way.
func (s *AgentService) MergePlan(projectID, agentID string) (workspace.MergePlan, error) {
	w, err := s.worktrees()
	if err != nil {
		return workspace.MergePlan{}, err
	}
	return w.WorktreeMergePlan(context.Background(), projectID, agentID)
}

// Merge commits a worktree agent's uncommitted work (message) and merges
// its branch into the base; a conflict is in the result (aborted, nothing
// lost).
func (s *AgentService) Merge(projectID, agentID, message string) (workspace.MergeResult, error) {
	w, err := s.worktrees()
	if err != nil {
		return workspace.MergeResult{}, err
	}
	return w.MergeWorktree(context.Background(), projectID, agentID, message)
}

// AskToResolve asks a worktree agent to merge its base and resolve the
// conflicts (it resumes with that instruction, through the queue).
func (s *AgentService) AskToResolve(projectID, agentID, message string) (supervisor.ResolveResult, error) {
	w, err := s.worktrees()
	if err != nil {
		return supervisor.ResolveResult{}, err
	}
	return w.AskToResolve(context.Background(), projectID, agentID, message)
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
