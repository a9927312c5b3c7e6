package api_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"shepherd/backend/api"
	"shepherd/backend/supervisor"
	"shepherd/backend/workspace"
)

// The real engine has worktrees.
var _ api.Worktrees = (*supervisor.Engine)(nil)

// wtFake is a fake engine with worktrees: it keeps the remove options and
// answers a canned diff.
type wtFake struct {
	*fakeEngine
	opts    supervisor.RemoveOptions
	message string // of the last merge or resolve
}

func (f *wtFake) WorktreeMergePlan(ctx context.Context, p, a string) (workspace.MergePlan, error) {
	if err := f.call("WorktreeMergePlan"); err != nil {
		return workspace.MergePlan{}, err
	}
	return workspace.MergePlan{Branch: "shepherd/" + a, Base: "main", Uncommitted: []workspace.Change{{Path: "notes.md", Status: "untracked"}},
		Message: "Work of agent " + a, Identity: "The User <user@example.com>"}, nil
}

func (f *wtFake) MergeWorktree(ctx context.Context, p, a, message string) (workspace.MergeResult, error) {
	if err := f.call("MergeWorktree"); err != nil {
		return workspace.MergeResult{}, err
	}
	f.mu.Lock()
	f.message = message
	f.mu.Unlock()
	return workspace.MergeResult{Committed: "c0ffee", Conflict: &workspace.ConflictError{Branch: "shepherd/" + a, Base: "main",
		Files: []string{"a.go"}, Committed: "c0ffee"}}, nil
}

func (f *wtFake) AskToResolve(ctx context.Context, p, a, message string) (supervisor.ResolveResult, error) {
	if err := f.call("AskToResolve"); err != nil {
		return supervisor.ResolveResult{}, err
	}
	f.mu.Lock()
	f.message = message
	f.mu.Unlock()
	return supervisor.ResolveResult{BaseMerge: workspace.BaseMerge{Conflicts: []string{"a.go"}}, Instruction: "resolve a.go"}, nil
}

func (f *wtFake) Remove(ctx context.Context, p, a string, o supervisor.RemoveOptions) error {
	if err := f.call("Remove"); err != nil {
		return err
	}
	f.mu.Lock()
	f.opts = o
	f.mu.Unlock()
	return nil
}

func (f *wtFake) AgentDiff(ctx context.Context, p, a string) (*workspace.Diff, error) {
	if err := f.call("AgentDiff"); err != nil {
		return nil, err
	}
	return &workspace.Diff{Base: "main", Files: []workspace.FileDiff{{Path: "a.go", Status: "modified", Added: 2, Deleted: 1,
		Hunks: []workspace.Hunk{{Header: "@@ -1 +1,2 @@", OldStart: 1, OldLines: 1, NewStart: 1, NewLines: 2,
			Lines: []workspace.Line{{Op: "-", Text: "x"}, {Op: "+", Text: "y"}, {Op: "+", Text: "z"}}}}}}, Added: 2, Deleted: 1}, nil
}

func (f *wtFake) RefreshWorktree(ctx context.Context, p, a string) (supervisor.WorktreeView, error) {
	if err := f.call("RefreshWorktree"); err != nil {
		return supervisor.WorktreeView{}, err
	}
	return supervisor.WorktreeView{ProjectID: p, AgentID: a, Status: workspace.Status{Branch: "shepherd/" + a, Base: "main", Ahead: 2, Dirty: true}}, nil
}

func TestWorktreeEndpoints(t *testing.T) {
	f := &wtFake{fakeEngine: newFake(t.TempDir())}
	h := api.New(f, token, api.Options{Version: "test"})

	var d workspace.Diff
	mustJSON(t, do(t, h, "GET", "/v1/projects/p1/agents/a1/diff", ""), 200, &d)
	if len(d.Files) != 1 || d.Files[0].Hunks[0].Lines[2].Text != "z" {
		t.Fatalf("diff %+v", d)
	}
	var v supervisor.WorktreeView
	mustJSON(t, do(t, h, "POST", "/v1/projects/p1/agents/a1/worktree/refresh", ""), 200, &v)
	if v.Status.Ahead != 2 || !v.Status.Dirty || v.AgentID != "a1" {
		t.Fatalf("refresh %+v", v)
	}
	w := do(t, h, "DELETE", "/v1/projects/p1/agents/a1?worktree=merge&discardChanges=true&force=true", "")
	if w.Code != 200 || f.opts != (supervisor.RemoveOptions{Force: true, Worktree: "merge", DiscardChanges: true}) {
		t.Fatalf("remove: %d %s, options %+v", w.Code, w.Body, f.opts)
	}
	w = do(t, h, "DELETE", "/v1/projects/p1/agents/a1?worktree=merge&message=done+by+a1", "")
	if w.Code != 200 || f.opts != (supervisor.RemoveOptions{Worktree: "merge", Message: "done by a1"}) {
		t.Fatalf("remove with a message: %d %s, options %+v", w.Code, w.Body, f.opts)
	}
	// The plan, the merge (a conflict is an answer: 200, merged false) and
	// the request to resolve.
	var plan workspace.MergePlan
	mustJSON(t, do(t, h, "GET", "/v1/projects/p1/agents/a1/worktree/merge", ""), 200, &plan)
	if len(plan.Uncommitted) != 1 || plan.Identity != "The User <user@example.com>" {
		t.Fatalf("plan %+v", plan)
	}
	var res workspace.MergeResult
	mustJSON(t, do(t, h, "POST", "/v1/projects/p1/agents/a1/worktree/merge", `{"message":"mine"}`), 200, &res)
	if res.Merged || res.Conflict == nil || res.Conflict.Files[0] != "a.go" || f.message != "mine" {
		t.Fatalf("merge %+v, message %q", res, f.message)
	}
	mustJSON(t, do(t, h, "POST", "/v1/projects/p1/agents/a1/worktree/merge", ""), 200, &res) // no body: the default message
	if f.message != "" {
		t.Fatalf("merge without a body: message %q", f.message)
	}
	var rr supervisor.ResolveResult
	mustJSON(t, do(t, h, "POST", "/v1/projects/p1/agents/a1/worktree/resolve", `{}`), 200, &rr)
	if rr.Instruction != "resolve a.go" || rr.Conflicts[0] != "a.go" {
		t.Fatalf("resolve %+v", rr)
	}
	if w := do(t, h, "POST", "/v1/projects/p1/agents/a1/worktree/merge", `{"msg":"typo"}`); w.Code != 400 {
		t.Fatalf("unknown field: %d %s", w.Code, w.Body)
	}
	for _, bad := range []string{"worktree=trash", "discardChanges=maybe", "worktree=keep&message=x"} {
		if w := do(t, h, "DELETE", "/v1/projects/p1/agents/a1?"+bad, ""); w.Code != 400 || errorBody(t, w).Error != "ValidationError" {
			t.Fatalf("%s: %d %s", bad, w.Code, w.Body)
		}
	}
	f.err = &supervisor.Error{Kind: supervisor.ErrWorktreeDirty, Message: "agent 'a1': worktree has uncommitted changes"}
	if w := do(t, h, "DELETE", "/v1/projects/p1/agents/a1?worktree=discard", ""); w.Code != http.StatusConflict || errorBody(t, w).Error != "WorktreeDirty" {
		t.Fatalf("dirty: %d %s", w.Code, w.Body)
	}
}

// Over the API, the typed client's worktree calls come back as the same
// values and error kinds.
func TestClientWorktrees(t *testing.T) {
	f := &wtFake{fakeEngine: newFake(t.TempDir())}
	c := clientOver(t, api.New(f, token, api.Options{Version: "test"}))
	ctx := context.Background()
	a1 := api.AgentIn{Project: "p1", Agent: "a1"}
	d, err := api.Call(ctx, c, api.GetDiff, a1)
	if err != nil || d.Body.Files[0].Added != 2 {
		t.Fatalf("diff %+v, %v", d, err)
	}
	if _, err := api.Call(ctx, c, api.RemoveAgent, api.RemoveAgentIn{Project: "p1", Agent: "a1", Worktree: "keep", DeleteLog: true}); err != nil {
		t.Fatal(err)
	}
	if f.opts != (supervisor.RemoveOptions{Worktree: "keep", DeleteLog: true}) {
		t.Fatalf("options %+v", f.opts)
	}
	f.err = &supervisor.Error{Kind: supervisor.ErrMergeConflict, Message: "conflicts in a.go"}
	_, err = api.Call(ctx, c, api.RemoveAgent, api.RemoveAgentIn{Project: "p1", Agent: "a1", Worktree: "merge"})
	if !errorsIs(err, supervisor.ErrMergeConflict) {
		t.Fatalf("conflict: %v", err)
	}
	if _, err := api.Call(ctx, c, api.RefreshWorktree, a1); !errorsIs(err, supervisor.ErrMergeConflict) {
		t.Fatalf("refresh: %v", err)
	}
	f.err = nil
	by := api.MergeIn{Project: "p1", Agent: "a1", Body: &api.MergeRequest{Message: "by hand"}}
	if res, err := api.Call(ctx, c, api.MergeWorktree, by); err != nil || res.Body.Conflict == nil || f.message != "by hand" {
		t.Fatalf("merge %+v, %v (message %q)", res, err, f.message)
	}
	if p, err := api.Call(ctx, c, api.GetMergePlan, a1); err != nil || p.Body.Uncommitted[0].Path != "notes.md" {
		t.Fatalf("plan %+v, %v", p, err)
	}
	m := api.MergeIn{Project: "p1", Agent: "a1", Body: &api.MergeRequest{Message: "m"}}
	if rr, err := api.Call(ctx, c, api.AskToResolve, m); err != nil || rr.Body.Instruction == "" || f.message != "m" {
		t.Fatalf("resolve %+v, %v", rr, err)
	}
	f.err = &supervisor.Error{Kind: supervisor.ErrNotResumable, Message: "cannot be given an instruction"}
	if _, err := api.Call(ctx, c, api.AskToResolve, api.MergeIn{Project: "p1", Agent: "a1"}); !errorsIs(err, supervisor.ErrNotResumable) {
		t.Fatalf("resolve refused: %v", err)
	}
}

func clientOver(t *testing.T, h http.Handler) *api.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return api.NewClient(api.EngineInfo{URL: srv.URL, Token: token})
}

func errorsIs(err, kind error) bool { return errors.Is(err, kind) }
