package supervisor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"time"

	"shepherd/backend/sandbox"
	"shepherd/backend/store"
	"shepherd/backend/workspace"
)

// EventWorktree is pushed when an agent's worktree status was looked at
// again (its run ended, or a refresh): data WorktreeView. The window
// reloads the diff it shows.
const EventWorktree = "agent:worktree"

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

// WorktreeRoot is where agents' worktrees go: Config.WorktreeDir, else a
// folder beside the data folder. Not inside it: the data folder is hidden
// from every sandbox, and a sandboxed agent must write in its worktree.
func (e *Engine) WorktreeRoot() string {
	if e.cfg.WorktreeDir != "" {
		return e.cfg.WorktreeDir
	}
	return filepath.Join(filepath.Dir(filepath.Clean(e.cfg.DataDir)), "shepherd-worktrees")
}

func (e *Engine) worktreeDir(projectID, agentID string) string {
	return filepath.Join(e.WorktreeRoot(), projectID, agentID)
}

// hasWorktree reports whether r runs in a worktree Shepherd made.
func hasWorktree(r *store.Record) bool {
	return r.Workspace != nil && r.Workspace.Worktree && r.Workspace.Path != ""
}

// intoWorktree maps cwd, a folder of the project's checkout, to the same
// folder in the worktree (the project folder itself to the worktree's
// matching folder).
func intoWorktree(w *workspace.Workspace, projectPath, cwd string) string {
	if within(cwd, w.Path) {
		return cwd
	}
	top := w.Repo
	if !within(cwd, top) {
		top = projectPath
	}
	rel, err := filepath.Rel(top, cwd)
	if err != nil || rel == ".." || len(rel) > 2 && rel[:3] == "../" {
		return w.Path
	}
	return filepath.Join(w.Path, rel)
}

// makeWorktree makes spec's worktree (spec.Workspace asks for one), runs
// the project's setup command with its output in the agent's log, and
// points spec's cwd into it. A sandboxed agent gets @write: on it.
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
	logPath := e.st.LogPath(p.info.ID, spec.ID)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return nil, err
	}
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	w, err := workspace.Create(ctx, workspace.Options{Project: spec.Cwd, Dir: e.worktreeDir(p.info.ID, spec.ID),
		AgentID: spec.ID, Base: spec.Workspace.Base, Setup: setup, Log: log})
	if err != nil && w.Path == "" {
		return nil, newErr(ErrWorktree, "agent '%s': %v", spec.ID, err)
	}
	if err != nil { // the setup failed: the worktree is there, the user is told
		w.Warning = err.Error()
	}
	e.lookAt(ctx, &w)
	spec.Cwd = intoWorktree(&w, p.info.Path, spec.Cwd)
	if spec.Permissions != nil || spec.Caller != nil {
		var tags []string
		if spec.Permissions != nil {
			tags = *spec.Permissions
		}
		spec.Permissions = withWrite(tags, w.Path)
	}
	e.appendEvent(p.info.ID, store.Event{Time: e.clock.Now().UTC(), Event: "worktree:created", AgentID: spec.ID,
		Data: map[string]any{"path": w.Path, "branch": w.Branch, "base": w.Base, "baseCommit": w.BaseCommit}})
	return &w, nil
}

// withWrite is tags with @write:dir added (a sandboxed agent writes in its
// worktree by default).
func withWrite(tags []string, dir string) *[]string {
	out := append([]string{}, tags...)
	if tag := sandbox.TagWritePrefix + dir; !slices.Contains(out, tag) {
		out = append(out, tag)
	}
	return &out
}

// lookAt fills w's last-seen status.
func (e *Engine) lookAt(ctx context.Context, w *workspace.Workspace) {
	st, err := workspace.StatusOf(ctx, *w)
	if err != nil {
		e.log.Warn().Err(err).Str("worktree", w.Path).Msg("cannot read worktree status")
		return
	}
	now := e.clock.Now().UTC()
	w.Ahead, w.Behind, w.Dirty, w.Merging, w.Conflicts, w.CheckedAt = st.Ahead, st.Behind, st.Dirty, st.Merging, st.Conflicts, &now
}

// verifyWorktrees is the check at load: every worktree agent's worktree and
// branch are looked for, and what vanished (or a base that moved) is put
// on its record and in the events — never made again.
func (e *Engine) verifyWorktrees(p *project) {
	for _, a := range p.list() {
		a.mu.Lock()
		if !hasWorktree(a.rec) {
			a.mu.Unlock()
			continue
		}
		w := *a.rec.Workspace
		a.mu.Unlock()
		e.checkWorktree(e.ctx, a, w, true)
		e.watchWorktree(a)
	}
}

// checkWorktree verifies w and records what it found on a's record (an
// event when it newly found a problem).
func (e *Engine) checkWorktree(ctx context.Context, a *agent, w workspace.Workspace, atLoad bool) workspace.Status {
	next, problem, warning := workspace.Verify(ctx, w) // with what git registered (old records get it here)
	if problem == "" && w.Warning != "" && !atLoad {
		warning = w.Warning // keep a setup failure's note until a refresh finds nothing else
	}
	next.Problem, next.Warning = problem, warning
	if problem == "" {
		e.lookAt(ctx, &next)
	}
	st := workspace.Status{Branch: next.Branch, Base: next.Base, Ahead: next.Ahead, Behind: next.Behind, Dirty: next.Dirty,
		Merging: next.Merging, Conflicts: next.Conflicts, Problem: problem}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gone() || !hasWorktree(a.rec) {
		return st
	}
	old := a.rec.Workspace
	if problem != "" && problem != old.Problem {
		e.appendEvent(a.rec.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "worktree:problem", AgentID: a.rec.ID, Reason: problem})
		e.log.Warn().Str("project", a.rec.ProjectID).Str("agent", a.rec.ID).Str("problem", problem).Msg("worktree problem")
	}
	if err := e.update(a, func(r *store.Record) { r.Workspace = &next }); err != nil {
		e.log.Warn().Err(err).Str("agent", a.rec.ID).Msg("cannot record worktree status")
	}
	return st
}

// RefreshWorktree looks at an agent's worktree again (status, vanished
// parts, a moved base), records it and pushes agent:worktree.
func (e *Engine) RefreshWorktree(ctx context.Context, projectID, agentID string) (WorktreeView, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return WorktreeView{}, err
	}
	a.mu.Lock()
	if !hasWorktree(a.rec) {
		a.mu.Unlock()
		return WorktreeView{}, errNoWorktree(agentID)
	}
	w := *a.rec.Workspace
	a.mu.Unlock()
	v := WorktreeView{ProjectID: projectID, AgentID: agentID, Status: e.checkWorktree(ctx, a, w, false)}
	e.emit(EventWorktree, v)
	return v, nil
}

// worktreeRunEnded refreshes an agent's worktree status after its run
// ended, off the caller's locks.
func (e *Engine) worktreeRunEnded(a *agent) {
	if !hasWorktree(a.rec) {
		return
	}
	pid, id := a.rec.ProjectID, a.rec.ID
	e.goTask(func() {
		ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
		defer cancel()
		if _, err := e.RefreshWorktree(ctx, pid, id); err != nil {
			e.log.Debug().Err(err).Str("agent", id).Msg("worktree refresh after run")
		}
	})
}

// AgentDiff is an agent's worktree diff against its base.
func (e *Engine) AgentDiff(ctx context.Context, projectID, agentID string) (*workspace.Diff, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	if !hasWorktree(a.rec) {
		a.mu.Unlock()
		return nil, errNoWorktree(agentID)
	}
	w := *a.rec.Workspace
	a.mu.Unlock()
	d, err := workspace.DiffOf(ctx, w)
	if err != nil {
		return nil, newErr(ErrWorktree, "agent '%s': %v", agentID, err)
	}
	return d, nil
}

func errNoWorktree(id string) error {
	return newErr(ErrValidation, "agent '%s' does not run in a worktree of its own", id)
}

// endWorktree ends a's worktree as o says; a.mu is held.
func (e *Engine) endWorktree(ctx context.Context, a *agent, o RemoveOptions) error {
	if !hasWorktree(a.rec) {
		return nil
	}
	how := o.Worktree
	if how == "" {
		how = workspace.Keep
	}
	w := *a.rec.Workspace
	if err := workspace.End(ctx, w, how, o.DiscardChanges, o.Message); err != nil {
		return worktreeErr(a.rec.ID, err)
	}
	e.appendEvent(a.rec.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "worktree:" + how, AgentID: a.rec.ID,
		Data: map[string]any{"path": w.Path, "branch": w.Branch, "base": w.Base}})
	return nil
}

// worktreeErr gives a worktree failure its kind.
func worktreeErr(id string, err error) error {
	switch {
	case errors.Is(err, workspace.ErrDirty):
		return newErr(ErrWorktreeDirty, "agent '%s': %v; remove it again with discardChanges to let them go", id, err)
	case errors.Is(err, workspace.ErrConflict):
		return newErr(ErrMergeConflict, "agent '%s': %v", id, err)
	case errors.Is(err, workspace.ErrUnresolved):
		return newErr(ErrMergeConflict, "agent '%s': %v", id, err)
	case errors.Is(err, workspace.ErrNoIdentity), errors.Is(err, workspace.ErrNotBranch):
		return newErr(ErrValidation, "agent '%s': %v", id, err)
	}
	return newErr(ErrWorktree, "agent '%s': %v", id, err)
}

// checkEnd refuses, before anything is stopped, a remove that would lose a
// dirty worktree's changes, a merge that cannot happen (its base is not a
// branch, or not checked out; git has no identity; conflicts the agent has
// not resolved), or a choice that is not one.
func (e *Engine) checkEnd(ctx context.Context, a *agent, o RemoveOptions) error {
	if o.Worktree != "" {
		if err := workspace.ValidEnd(o.Worktree); err != nil {
			return newErr(ErrValidation, "agent '%s': %v", a.id(), err)
		}
	}
	a.mu.Lock()
	if !hasWorktree(a.rec) {
		a.mu.Unlock()
		return nil
	}
	w := *a.rec.Workspace
	a.mu.Unlock()
	if o.Worktree == workspace.Merge {
		plan, err := workspace.PlanMerge(ctx, w)
		if err != nil {
			return worktreeErr(a.id(), err)
		}
		if plan.Blocked != "" {
			return newErr(ErrWorktree, "agent '%s': %s", a.id(), plan.Blocked)
		}
		return nil
	}
	if o.DiscardChanges {
		return nil
	}
	if _, err := os.Stat(w.Path); err != nil {
		return nil // vanished: nothing to lose
	}
	if dirty, err := workspace.IsDirty(ctx, w); err == nil && dirty {
		return worktreeErr(a.id(), &workspace.DirtyError{Path: w.Path})
	}
	return nil
}
