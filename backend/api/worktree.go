package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"shepherd/backend/supervisor"
	"shepherd/backend/workspace"
)

// Worktrees is what the API needs for agents that run in a worktree of
// their own (*supervisor.Engine and *Remote have it): remove with a choice,
// the diff, a refresh of the status, a merge (with its plan first), and
// asking the agent to resolve a merge's conflicts.
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
	Message string `json:"message"`
}

var _ Worktrees = (*Remote)(nil)

// worktreeRoutes are registered when the engine has Worktrees; they are the
// user's alone (not in agentRoutes): a diff reads the checkout, a refresh
// writes the record, a merge commits as the user into their checkout.
func (h *handler) worktreeRoutes() {
	if h.wt == nil {
		return
	}
	h.handle("GET /v1/projects/{project}/agents/{agent}/diff", h.agentDiff)
	h.handle("POST /v1/projects/{project}/agents/{agent}/worktree/refresh", h.refreshWorktree)
	h.handle("GET /v1/projects/{project}/agents/{agent}/worktree/merge", h.mergePlan)
	h.handle("POST /v1/projects/{project}/agents/{agent}/worktree/merge", h.mergeWorktree)
	h.handle("POST /v1/projects/{project}/agents/{agent}/worktree/resolve", h.askToResolve)
}

func (h *handler) mergePlan(w http.ResponseWriter, r *http.Request) {
	plan, err := h.wt.WorktreeMergePlan(r.Context(), r.PathValue("project"), r.PathValue("agent"))
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, plan)
}

// mergeWorktree answers 200 also for a conflict: the merge was aborted,
// nothing lost, and the answer says so (merged false, conflict).
func (h *handler) mergeWorktree(w http.ResponseWriter, r *http.Request) {
	var req MergeRequest
	if !decodeBody(w, r, &req, true) {
		return
	}
	res, err := h.wt.MergeWorktree(r.Context(), r.PathValue("project"), r.PathValue("agent"), req.Message)
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (h *handler) askToResolve(w http.ResponseWriter, r *http.Request) {
	var req MergeRequest
	if !decodeBody(w, r, &req, true) {
		return
	}
	res, err := h.wt.AskToResolve(r.Context(), r.PathValue("project"), r.PathValue("agent"), req.Message)
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (h *handler) agentDiff(w http.ResponseWriter, r *http.Request) {
	d, err := h.wt.AgentDiff(r.Context(), r.PathValue("project"), r.PathValue("agent"))
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (h *handler) refreshWorktree(w http.ResponseWriter, r *http.Request) {
	v, err := h.wt.RefreshWorktree(r.Context(), r.PathValue("project"), r.PathValue("agent"))
	if err != nil {
		writeEngineError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// removeOptions reads DELETE …/{agent}'s ?worktree=keep|merge|discard,
// ?discardChanges=true and ?message= (a merge's commit message); false when
// it wrote a refusal. Only the user merges into their checkout.
func (h *handler) removeOptions(w http.ResponseWriter, r *http.Request, o *supervisor.RemoveOptions) bool {
	q := r.URL.Query()
	o.Worktree = q.Get("worktree")
	if o.Worktree != "" {
		if err := workspace.ValidEnd(o.Worktree); err != nil {
			writeError(w, http.StatusBadRequest, "ValidationError", "query parameter "+err.Error())
			return false
		}
	}
	dc, ok := boolParam(w, q.Get("discardChanges"), "discardChanges")
	if !ok {
		return false
	}
	o.DiscardChanges = dc
	o.Message = q.Get("message")
	if o.Message != "" && o.Worktree != workspace.Merge {
		writeError(w, http.StatusBadRequest, "ValidationError", "query parameter message goes with worktree=merge")
		return false
	}
	if c := CallerOf(r); !c.User && o.Worktree == workspace.Merge {
		writeError(w, http.StatusForbidden, supervisor.KindName(supervisor.ErrPermissionDenied),
			"agent '"+c.Agent.AgentID+"' cannot merge a branch into the user's checkout: only the user can")
		return false
	}
	return true
}

// Remove removes an agent with a choice for its worktree.
func (r *Remote) Remove(ctx context.Context, projectID, agentID string, o supervisor.RemoveOptions) error {
	q := url.Values{}
	q.Set("force", strconv.FormatBool(o.Force))
	q.Set("deleteLog", strconv.FormatBool(o.DeleteLog))
	if o.Worktree != "" {
		q.Set("worktree", o.Worktree)
	}
	if o.DiscardChanges {
		q.Set("discardChanges", "true")
	}
	if o.Message != "" {
		q.Set("message", o.Message)
	}
	return r.call(ctx, http.MethodDelete, agentPath(projectID, agentID)+"?"+q.Encode(), nil, nil)
}

// AgentDiff is an agent's worktree diff against its base.
func (r *Remote) AgentDiff(ctx context.Context, projectID, agentID string) (*workspace.Diff, error) {
	var d workspace.Diff
	if err := r.call(ctx, http.MethodGet, agentPath(projectID, agentID, "diff"), nil, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// RefreshWorktree looks at an agent's worktree again.
func (r *Remote) RefreshWorktree(ctx context.Context, projectID, agentID string) (supervisor.WorktreeView, error) {
	var v supervisor.WorktreeView
	return v, r.call(ctx, http.MethodPost, agentPath(projectID, agentID, "worktree", "refresh"), nil, &v)
}

// WorktreeMergePlan says what merging an agent's worktree would do.
func (r *Remote) WorktreeMergePlan(ctx context.Context, projectID, agentID string) (workspace.MergePlan, error) {
	var p workspace.MergePlan
	return p, r.call(ctx, http.MethodGet, agentPath(projectID, agentID, "worktree", "merge"), nil, &p)
}

// MergeWorktree commits an agent's uncommitted work and merges its branch
// into the base (a conflict is in the result).
func (r *Remote) MergeWorktree(ctx context.Context, projectID, agentID, message string) (workspace.MergeResult, error) {
	var res workspace.MergeResult
	return res, r.call(ctx, http.MethodPost, agentPath(projectID, agentID, "worktree", "merge"), MergeRequest{Message: message}, &res)
}

// AskToResolve asks an agent to merge its base and resolve the conflicts.
func (r *Remote) AskToResolve(ctx context.Context, projectID, agentID, message string) (supervisor.ResolveResult, error) {
	var res supervisor.ResolveResult
	return res, r.call(ctx, http.MethodPost, agentPath(projectID, agentID, "worktree", "resolve"), MergeRequest{Message: message}, &res)
}
