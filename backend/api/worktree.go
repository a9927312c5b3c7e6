package api

import (
	"context"
	"net/http"

	"shepherd/backend/supervisor"
	"shepherd/backend/workspace"
)

// Worktrees is what the API needs for agents that run in a worktree of
// their own (*supervisor.Engine has it): remove with a choice, the diff, a
// refresh of the status, a merge (with its plan first), and asking the
// agent to resolve a merge's conflicts. An engine without it answers these
// operations as if they did not exist. They are the user's alone: a diff
// reads the checkout, a refresh writes the record, a merge commits as the
// user into their checkout.
type Worktrees interface {
	Remove(ctx context.Context, projectID, agentID string, o supervisor.RemoveOptions) error
	AgentDiff(ctx context.Context, projectID, agentID string) (*workspace.Diff, error)
	RefreshWorktree(ctx context.Context, projectID, agentID string) (supervisor.WorktreeView, error)
	WorktreeMergePlan(ctx context.Context, projectID, agentID string) (workspace.MergePlan, error)
	MergeWorktree(ctx context.Context, projectID, agentID, message string) (workspace.MergeResult, error)
	AskToResolve(ctx context.Context, projectID, agentID, message string) (supervisor.ResolveResult, error)
}

// MergeRequest is the body of a merge and of a request to resolve: the
// message of the commit of the uncommitted work (empty: the default one).
type MergeRequest struct {
	Message string `json:"message" doc:"the message of the commit of the uncommitted work (empty: the default one)"`
}

// MergeIn is the input of mergeWorktree and askToResolve.
type MergeIn struct {
	Project string `path:"project" doc:"the project's id"`
	Agent   string `path:"agent" doc:"the agent's id"`
	Body    *MergeRequest
}

// worktreeOp defines an operation of the worktree side.
func worktreeOp[I, T any](id, method, path, summary string, do func(w Worktrees, ctx context.Context, in *I) (T, error)) *Op[I, Reply[T]] {
	return define(&Op[I, Reply[T]]{ID: id, Method: method, Path: path, Access: UserOnly, Summary: summary},
		func(h *handler, ctx context.Context, in *I) (*Reply[T], error) {
			if h.wt == nil {
				return nil, noSuchEndpoint(ctx)
			}
			v, err := do(h.wt, ctx, in)
			return &Reply[T]{v}, err
		})
}

var GetDiff = worktreeOp("getDiff", http.MethodGet, agentPath+"/diff",
	"A worktree agent's changes against its base (files, +/−, hunks)",
	func(w Worktrees, ctx context.Context, in *AgentIn) (*workspace.Diff, error) {
		return w.AgentDiff(ctx, in.Project, in.Agent)
	})

var RefreshWorktree = worktreeOp("refreshWorktree", http.MethodPost, agentPath+"/worktree/refresh",
	"Look at a worktree agent's worktree again: ahead, behind, dirty, what vanished (pushes agent:worktree)",
	func(w Worktrees, ctx context.Context, in *AgentIn) (supervisor.WorktreeView, error) {
		return w.RefreshWorktree(ctx, in.Project, in.Agent)
	})

var GetMergePlan = worktreeOp("getMergePlan", http.MethodGet, agentPath+"/worktree/merge",
	"What merging a worktree agent's work would do now: what is committed first, the default message, as whom, what stands in the way",
	func(w Worktrees, ctx context.Context, in *AgentIn) (workspace.MergePlan, error) {
		return w.WorktreeMergePlan(ctx, in.Project, in.Agent)
	})

// MergeWorktree answers 200 also for a conflict: the merge was aborted,
// nothing lost, and the answer says so (merged false, conflict).
var MergeWorktree = worktreeOp("mergeWorktree", http.MethodPost, agentPath+"/worktree/merge",
	"Commit a worktree agent's uncommitted work, then merge its branch into the base (a conflict is in the answer: aborted, nothing lost)",
	func(w Worktrees, ctx context.Context, in *MergeIn) (workspace.MergeResult, error) {
		return w.MergeWorktree(ctx, in.Project, in.Agent, in.message())
	})

var AskToResolve = worktreeOp("askToResolve", http.MethodPost, agentPath+"/worktree/resolve",
	"Ask a worktree agent to merge its base and resolve the conflicts (it resumes with that instruction, through the queue)",
	func(w Worktrees, ctx context.Context, in *MergeIn) (supervisor.ResolveResult, error) {
		return w.AskToResolve(ctx, in.Project, in.Agent, in.message())
	})

func (in *MergeIn) message() string {
	if in.Body == nil {
		return ""
	}
	return in.Body.Message
}
