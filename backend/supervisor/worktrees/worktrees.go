// Package worktrees runs agents in git worktrees of their own (SPEC
// "Workspaces"): made at create (Make), on branch shepherd/<id>, with the
// project's setup command; looked at again at load (Verify), when a run
// ends and whenever git's files change (watch.go); merged into the base,
// or its conflicts handed to the agent (merge.go); ended — kept, merged or
// discarded — when the agent is removed (CheckEnd before anything is
// stopped, End after). Git itself is package workspace's, pinned and
// hardened.
package worktrees

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"

	"shepherd/backend/filewatch"
	"shepherd/backend/sandbox"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/errs"
	"shepherd/backend/supervisor/hook"
	"shepherd/backend/workspace"
)

// EventName is pushed when an agent's worktree status was looked at again
// (its run ended, or a refresh): data View. The window reloads the diff it
// shows.
const EventName = "agent:worktree"

// View is an agent's worktree status, as pushed and as answered.
type View struct {
	ProjectID string           `json:"projectId"`
	AgentID   string           `json:"agentId"`
	Status    workspace.Status `json:"status"`
}

// Core is what the worktrees need of the engine's core.
type Core interface {
	Clock() clockwork.Clock
	Go(f func()) bool
	Event(projectID string, ev store.Event)
	Emit(event string, data any)
	// Files watches files for changes; nil when the engine polls.
	Files() *filewatch.Watcher
	Agent(projectID, agentID string) (hook.Agent, error)
	// Life ends when a is removed or the engine closes.
	Life(a hook.Agent) context.Context
	// Under the agent's lock: a change of fields; the record as callers
	// see it; a resume (through the queue).
	Update(a hook.Agent, mut func(*store.Record)) error
	Snapshot(a hook.Agent) *store.Record
	Resume(a hook.Agent) error
}

// Worktrees hangs the worktrees on the core.
type Worktrees struct {
	core Core
	log  zerolog.Logger
	root string
	ctx  context.Context // the engine's: done when it closes

	mu      sync.Mutex
	watches map[hook.Agent]*watch // with file watching: each worktree agent's watch of git's files
}

// New returns the worktrees over core; root is where agents' worktrees go,
// ctx ends with the engine.
func New(ctx context.Context, core Core, log zerolog.Logger, root string) *Worktrees {
	return &Worktrees{core: core, log: log, root: root, ctx: ctx, watches: map[hook.Agent]*watch{}}
}

// Root is where agents' worktrees go.
func (w *Worktrees) Root() string { return w.root }

// Dir is where an agent's worktree goes.
func (w *Worktrees) Dir(projectID, agentID string) string {
	return filepath.Join(w.root, projectID, agentID)
}

// Has reports whether r runs in a worktree Shepherd made.
func Has(r *store.Record) bool {
	return r.Workspace != nil && r.Workspace.Worktree && r.Workspace.Path != ""
}

// Into maps cwd, a folder of the project's checkout, to the same folder in
// the worktree (the project folder itself to the worktree's matching
// folder).
func Into(w *workspace.Workspace, projectPath, cwd string) string {
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

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// WithWrite is tags with @write:dir added (a sandboxed agent writes in its
// worktree by default).
func WithWrite(tags []string, dir string) *[]string {
	out := append([]string{}, tags...)
	if tag := sandbox.TagWritePrefix + dir; !slices.Contains(out, tag) {
		out = append(out, tag)
	}
	return &out
}

// Request is what an agent's create asks of its worktree.
type Request struct {
	ProjectID, ProjectPath string
	AgentID                string
	Cwd                    string // the folder asked for, in the project's checkout
	Base                   string // the branch to start from ("": the current one)
	Setup                  string // the project's setup command ("": none)
	Log                    string // the agent's log, which the setup's output goes to
}

// Make makes an agent's worktree, runs the project's setup command with its
// output in the agent's log, and records it in the events. A setup that
// fails leaves the worktree, with a warning for the user.
func (w *Worktrees) Make(ctx context.Context, q Request) (*workspace.Workspace, error) {
	if err := os.MkdirAll(filepath.Dir(q.Log), 0o700); err != nil {
		return nil, err
	}
	log, err := os.OpenFile(q.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	ws, err := workspace.Create(ctx, workspace.Options{Project: q.Cwd, Dir: w.Dir(q.ProjectID, q.AgentID),
		AgentID: q.AgentID, Base: q.Base, Setup: q.Setup, Log: log})
	if err != nil && ws.Path == "" {
		return nil, errs.New(errs.Worktree, "agent '%s': %v", q.AgentID, err)
	}
	if err != nil { // the setup failed: the worktree is there, the user is told
		ws.Warning = err.Error()
	}
	w.lookAt(ctx, &ws)
	w.core.Event(q.ProjectID, store.Event{Time: w.core.Clock().Now().UTC(), Event: "worktree:created", AgentID: q.AgentID,
		Data: map[string]any{"path": ws.Path, "branch": ws.Branch, "base": ws.Base, "baseCommit": ws.BaseCommit}})
	return &ws, nil
}

// Undo removes a worktree made for a create that was then refused: nothing
// of it is kept.
func (w *Worktrees) Undo(ws *workspace.Workspace, agentID string) {
	if err := workspace.End(context.Background(), *ws, workspace.Discard, true, ""); err != nil {
		w.log.Warn().Err(err).Str("agent", agentID).Msg("cannot undo the worktree of a refused create")
	}
}

// lookAt fills ws's last-seen status.
func (w *Worktrees) lookAt(ctx context.Context, ws *workspace.Workspace) {
	st, err := workspace.StatusOf(ctx, *ws)
	if err != nil {
		w.log.Warn().Err(err).Str("worktree", ws.Path).Msg("cannot read worktree status")
		return
	}
	now := w.core.Clock().Now().UTC()
	ws.Ahead, ws.Behind, ws.Dirty, ws.Merging, ws.Conflicts, ws.CheckedAt = st.Ahead, st.Behind, st.Dirty, st.Merging, st.Conflicts, &now
}

// Load is the check at a project's load: the worktree and branch of each
// of its agents that has one are looked for, and what vanished (or a base
// that moved) is put on its record and in the events — never made again;
// each is watched from then on.
func (w *Worktrees) Load(agents []hook.Agent) {
	for _, a := range agents {
		a.Lock()
		if !Has(a.Rec()) {
			a.Unlock()
			continue
		}
		ws := *a.Rec().Workspace
		a.Unlock()
		w.check(w.ctx, a, ws, true)
		w.Watch(a)
	}
}

// check verifies ws and records what it found on a's record (an event when
// it newly found a problem).
func (w *Worktrees) check(ctx context.Context, a hook.Agent, ws workspace.Workspace, atLoad bool) workspace.Status {
	next, problem, warning := workspace.Verify(ctx, ws) // with what git registered (old records get it here)
	if problem == "" && ws.Warning != "" && !atLoad {
		warning = ws.Warning // keep a setup failure's note until a refresh finds nothing else
	}
	next.Problem, next.Warning = problem, warning
	if problem == "" {
		w.lookAt(ctx, &next)
	}
	st := workspace.Status{Branch: next.Branch, Base: next.Base, Ahead: next.Ahead, Behind: next.Behind, Dirty: next.Dirty,
		Merging: next.Merging, Conflicts: next.Conflicts, Problem: problem}
	a.Lock()
	defer a.Unlock()
	r := a.Rec()
	if a.Gone() || !Has(r) {
		return st
	}
	if problem != "" && problem != r.Workspace.Problem {
		w.core.Event(r.ProjectID, store.Event{Time: w.core.Clock().Now().UTC(), Event: "worktree:problem", AgentID: r.ID, Reason: problem})
		w.log.Warn().Str("project", r.ProjectID).Str("agent", r.ID).Str("problem", problem).Msg("worktree problem")
	}
	if err := w.core.Update(a, func(r *store.Record) { r.Workspace = &next }); err != nil {
		w.log.Warn().Err(err).Str("agent", r.ID).Msg("cannot record worktree status")
	}
	return st
}

// of is a's workspace (a's lock is held), or the error for an agent without
// one.
func of(a hook.Agent) (workspace.Workspace, error) {
	r := a.Rec()
	if !Has(r) {
		return workspace.Workspace{}, noWorktree(r.ID)
	}
	return *r.Workspace, nil
}

// Refresh looks at an agent's worktree again (status, vanished parts, a
// moved base), records it and pushes EventName.
func (w *Worktrees) Refresh(ctx context.Context, projectID, agentID string) (View, error) {
	a, err := w.core.Agent(projectID, agentID)
	if err != nil {
		return View{}, err
	}
	a.Lock()
	ws, err := of(a)
	a.Unlock()
	if err != nil {
		return View{}, err
	}
	v := View{ProjectID: projectID, AgentID: agentID, Status: w.check(ctx, a, ws, false)}
	w.core.Emit(EventName, v)
	return v, nil
}

// RunEnded refreshes an agent's worktree status after its run ended, off
// the caller's locks (a's lock is held).
func (w *Worktrees) RunEnded(a hook.Agent) {
	r := a.Rec()
	if !Has(r) {
		return
	}
	pid, id := r.ProjectID, r.ID
	w.core.Go(func() {
		ctx, cancel := context.WithTimeout(w.ctx, time.Minute)
		defer cancel()
		if _, err := w.Refresh(ctx, pid, id); err != nil {
			w.log.Debug().Err(err).Str("agent", id).Msg("worktree refresh after run")
		}
	})
}

// refreshAfter looks at an agent's worktree again, off the caller's locks,
// and pushes EventName.
func (w *Worktrees) refreshAfter(projectID, agentID string) {
	w.core.Go(func() {
		if _, err := w.Refresh(w.ctx, projectID, agentID); err != nil {
			w.log.Debug().Err(err).Str("agent", agentID).Msg("worktree refresh")
		}
	})
}

// Diff is an agent's worktree diff against its base.
func (w *Worktrees) Diff(ctx context.Context, projectID, agentID string) (*workspace.Diff, error) {
	a, err := w.core.Agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	a.Lock()
	ws, err := of(a)
	a.Unlock()
	if err != nil {
		return nil, err
	}
	d, err := workspace.DiffOf(ctx, ws)
	if err != nil {
		return nil, errs.New(errs.Worktree, "agent '%s': %v", agentID, err)
	}
	return d, nil
}

// Ending is what becomes of a removed agent's worktree: How (keep — the
// default: the folder goes, the branch stays —, merge or discard), whether
// uncommitted changes may go (Discard), and the message of a merge's commit
// of them.
type Ending struct {
	How     string
	Discard bool
	Message string
}

// CheckEnd refuses, before anything is stopped, a remove that would lose a
// dirty worktree's changes, a merge that cannot happen (its base is not a
// branch, or not checked out; git has no identity; conflicts the agent has
// not resolved), or a choice that is not one.
func (w *Worktrees) CheckEnd(ctx context.Context, a hook.Agent, o Ending) error {
	a.Lock()
	id := a.Rec().ID
	has := Has(a.Rec())
	var ws workspace.Workspace
	if has {
		ws = *a.Rec().Workspace
	}
	a.Unlock()
	if o.How != "" {
		if err := workspace.ValidEnd(o.How); err != nil {
			return errs.New(errs.Validation, "agent '%s': %v", id, err)
		}
	}
	if !has {
		return nil
	}
	if o.How == workspace.Merge {
		plan, err := workspace.PlanMerge(ctx, ws)
		if err != nil {
			return kindOf(id, err)
		}
		if plan.Blocked != "" {
			return errs.New(errs.Worktree, "agent '%s': %s", id, plan.Blocked)
		}
		return nil
	}
	if o.Discard {
		return nil
	}
	if _, err := os.Stat(ws.Path); err != nil {
		return nil // vanished: nothing to lose
	}
	if dirty, err := workspace.IsDirty(ctx, ws); err == nil && dirty {
		return kindOf(id, &workspace.DirtyError{Path: ws.Path})
	}
	return nil
}

// End ends a's worktree as o says (a's lock is held).
func (w *Worktrees) End(ctx context.Context, a hook.Agent, o Ending) error {
	r := a.Rec()
	if !Has(r) {
		return nil
	}
	how := o.How
	if how == "" {
		how = workspace.Keep
	}
	ws := *r.Workspace
	if err := workspace.End(ctx, ws, how, o.Discard, o.Message); err != nil {
		return kindOf(r.ID, err)
	}
	w.core.Event(r.ProjectID, store.Event{Time: w.core.Clock().Now().UTC(), Event: "worktree:" + how, AgentID: r.ID,
		Data: map[string]any{"path": ws.Path, "branch": ws.Branch, "base": ws.Base}})
	return nil
}

func noWorktree(id string) error {
	return errs.New(errs.Validation, "agent '%s' does not run in a worktree of its own", id)
}

// kindOf gives a worktree failure its kind.
func kindOf(id string, err error) error {
	switch {
	case errors.Is(err, workspace.ErrDirty):
		return errs.New(errs.WorktreeDirty, "agent '%s': %v; remove it again with discardChanges to let them go", id, err)
	case errors.Is(err, workspace.ErrConflict):
		return errs.New(errs.MergeConflict, "agent '%s': %v", id, err)
	case errors.Is(err, workspace.ErrUnresolved):
		return errs.New(errs.MergeConflict, "agent '%s': %v", id, err)
	case errors.Is(err, workspace.ErrNoIdentity), errors.Is(err, workspace.ErrNotBranch):
		return errs.New(errs.Validation, "agent '%s': %v", id, err)
	}
	return errs.New(errs.Worktree, "agent '%s': %v", id, err)
}
