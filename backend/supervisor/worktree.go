package supervisor

import (
	"context"
	"path/filepath"

	"shepherd/backend/filewatch"
	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/hook"
	"shepherd/backend/supervisor/worktrees"
	"shepherd/backend/workspace"
)

// Worktrees are package worktrees'; the Engine's methods below are their
// doors, and the core's create, load, end of a run and remove call them.

// EventWorktree is pushed when an agent's worktree status was looked at
// again (its run ended, or a refresh): data WorktreeView. The window
// reloads the diff it shows.
const EventWorktree = worktrees.EventName

// WorktreeView is an agent's worktree status, as pushed and as answered.
type WorktreeView struct {
	ProjectID string           `json:"projectId"`
	AgentID   string           `json:"agentId"`
	Status    workspace.Status `json:"status"`
}

// RemoveOptions are what removing an agent takes.
type RemoveOptions struct {
	Force     bool // stop a live agent first
	DeleteLog bool
	// Worktree is what happens to a worktree agent's worktree: keep (the
	// default: the folder goes, the branch stays), merge or discard.
	Worktree string
	// DiscardChanges lets a worktree with uncommitted changes go (the user
	// was asked); without it a keep or discard of such a worktree is refused
	// with WorktreeDirty. A merge takes them: they are committed first, with
	// Message (empty: the default message).
	DiscardChanges bool
	Message        string
}

func (o RemoveOptions) ending() worktrees.Ending {
	return worktrees.Ending{How: o.Worktree, Discard: o.DiscardChanges, Message: o.Message}
}

// ResolveResult is what asking an agent to resolve a merge did.
type ResolveResult struct {
	workspace.BaseMerge
	// Instruction is the prompt the agent resumes with ("" when there was
	// nothing to resolve: Clean); Status, the agent's after (resumed, or
	// queued at QueuePosition).
	Instruction   string           `json:"instruction,omitempty"`
	Status        lifecycle.Status `json:"status,omitempty"`
	QueuePosition int              `json:"queuePosition,omitempty"`
}

// worktreeRoot is where agents' worktrees go: Config.WorktreeDir, else a
// folder beside the data folder. Not inside it: the data folder is hidden
// from every sandbox, and a sandboxed agent must write in its worktree.
func worktreeRoot(cfg Config) string {
	if cfg.WorktreeDir != "" {
		return cfg.WorktreeDir
	}
	return filepath.Join(filepath.Dir(filepath.Clean(cfg.DataDir)), "shepherd-worktrees")
}

// WorktreeRoot is where agents' worktrees go.
func (e *Engine) WorktreeRoot() string { return e.wt.Root() }

// RefreshWorktree looks at an agent's worktree again (status, vanished
// parts, a moved base), records it and pushes agent:worktree.
func (e *Engine) RefreshWorktree(ctx context.Context, projectID, agentID string) (WorktreeView, error) {
	v, err := e.wt.Refresh(ctx, projectID, agentID)
	return WorktreeView(v), err
}

// AgentDiff is an agent's worktree diff against its base.
func (e *Engine) AgentDiff(ctx context.Context, projectID, agentID string) (*workspace.Diff, error) {
	return e.wt.Diff(ctx, projectID, agentID)
}

// WorktreeMergePlan says what merging an agent's worktree would do now:
// what is committed first, the default message, as whom, and what stands
// in the way.
func (e *Engine) WorktreeMergePlan(ctx context.Context, projectID, agentID string) (workspace.MergePlan, error) {
	return e.wt.MergePlan(ctx, projectID, agentID)
}

// MergeWorktree merges an agent's worktree into its base, keeping the
// agent: its uncommitted work committed first (message; empty: the default
// message), then the branch merged in the project's checkout. A conflict is
// aborted (nothing lost) and answered in the result, not as an error.
func (e *Engine) MergeWorktree(ctx context.Context, projectID, agentID, message string) (workspace.MergeResult, error) {
	return e.wt.Merge(ctx, projectID, agentID, message)
}

// AskToResolve asks an agent to merge its base and resolve the conflicts,
// resuming it in its session with an instruction naming them (see
// worktrees.Worktrees.AskToResolve).
func (e *Engine) AskToResolve(ctx context.Context, projectID, agentID, message string) (ResolveResult, error) {
	res, err := e.wt.AskToResolve(ctx, projectID, agentID, message, func(r *store.Record) error {
		if err := notResumable(r); err != nil {
			return newErr(ErrNotResumable, "%v; keep the branch and resolve the conflicts by hand", err)
		}
		if !canInstruct(r) {
			return newErr(ErrNotResumable, "agent '%s' cannot be given an instruction: it is not a Claude Code or Codex agent "+
				"and its resume arguments have no %s; keep the branch and resolve the conflicts by hand", r.ID, promptPlaceholder)
		}
		return nil
	})
	return ResolveResult{BaseMerge: res.BaseMerge, Instruction: res.Instruction, Status: res.Status, QueuePosition: res.QueuePosition}, err
}

// makeWorktree makes spec's worktree when it asks for one, and points
// spec's cwd into it; a sandboxed agent gets @write: on it.
func (e *Engine) makeWorktree(ctx context.Context, p *project, spec *AgentSpec) (*workspace.Workspace, error) {
	if spec.Workspace == nil || !spec.Workspace.Worktree {
		return nil, nil
	}
	p.mu.Lock()
	_, taken := p.agents[spec.ID]
	setup := p.settings.WorktreeSetup
	p.mu.Unlock()
	if taken {
		return nil, errAlreadyExists(spec.ID)
	}
	w, err := e.wt.Make(ctx, worktrees.Request{ProjectID: p.info.ID, ProjectPath: p.info.Path, AgentID: spec.ID,
		Cwd: spec.Cwd, Base: spec.Workspace.Base, Setup: setup, Log: e.st.LogPath(p.info.ID, spec.ID)})
	if err != nil {
		return nil, err
	}
	spec.Cwd = worktrees.Into(w, p.info.Path, spec.Cwd)
	if spec.Permissions != nil || spec.Caller != nil {
		var tags []string
		if spec.Permissions != nil {
			tags = *spec.Permissions
		}
		spec.Permissions = worktrees.WithWrite(tags, w.Path)
	}
	return w, nil
}

// Files is the engine's watch of files (nil: it polls).
func (c core) Files() *filewatch.Watcher { return c.e.files }

// Life ends when the agent is removed or the engine closes.
func (c core) Life(a hook.Agent) context.Context { return a.(*agent).life }

// Resume resumes an agent (through the queue); its lock is held.
func (c core) Resume(a hook.Agent) error { return c.e.launch(a.(*agent), actResume) }

// agentsOf is p's agents as the features see them.
func agentsOf(p *project) []hook.Agent {
	as := p.list()
	out := make([]hook.Agent, len(as))
	for i, a := range as {
		out[i] = a
	}
	return out
}
