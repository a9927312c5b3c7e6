package supervisor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"shepherd/backend/lifecycle"
	"shepherd/backend/loganalysis"
	"shepherd/backend/logtail"
	"shepherd/backend/sandbox"
	"shepherd/backend/secrets"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/budget"
	"shepherd/backend/supervisor/worktrees"
)

// validateSpec checks spec and fills its defaults (cwd: the project folder,
// profile generic, grace 10 s). Errors name the agent and what was wrong.
func validateSpec(p *project, spec *AgentSpec) error {
	if err := store.ValidID(spec.ID); err != nil {
		return newErr(ErrValidation, "agent %v", err)
	}
	if strings.TrimSpace(spec.Command) == "" {
		return newErr(ErrValidation, "agent '%s': command is empty", spec.ID)
	}
	if spec.Cwd == "" {
		spec.Cwd = p.info.Path
	}
	if !filepath.IsAbs(spec.Cwd) {
		spec.Cwd = filepath.Join(p.info.Path, spec.Cwd)
	}
	spec.Cwd = filepath.Clean(spec.Cwd)
	if err := checkDir(spec.Cwd); err != nil {
		return newErr(ErrValidation, "agent '%s': cwd %v", spec.ID, err)
	}
	switch spec.Profile {
	case "":
		spec.Profile = store.ProfileGeneric
	case store.ProfileGeneric, store.ProfileClaudeJSON, store.ProfileCodexJSON:
	default:
		return newErr(ErrValidation, "agent '%s': unknown profile %q (use %q, %q or %q)",
			spec.ID, spec.Profile, store.ProfileGeneric, store.ProfileClaudeJSON, store.ProfileCodexJSON)
	}
	prof := loganalysis.Profile{Name: spec.Profile, CompletionPattern: spec.CompletionPattern, ErrorPattern: spec.ErrorPattern}
	if err := prof.Validate(); err != nil {
		return newErr(ErrValidation, "agent '%s': %v", spec.ID, err)
	}
	if spec.TimeoutSec < 0 {
		return newErr(ErrValidation, "agent '%s': timeoutSec must be 0 (none) or positive, not %d", spec.ID, spec.TimeoutSec)
	}
	if spec.GraceSec < 0 || spec.GraceSec > 3600 {
		return newErr(ErrValidation, "agent '%s': graceSec must be between 0 (default %d) and 3600, not %d", spec.ID, store.DefaultGraceSec, spec.GraceSec)
	}
	if spec.GraceSec == 0 {
		spec.GraceSec = store.DefaultGraceSec
	}
	for k := range spec.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return newErr(ErrValidation, "agent '%s': environment variable name %q is not valid", spec.ID, k)
		}
	}
	switch spec.OnStale {
	case "", store.OnStaleFlag, store.OnStaleRestart, store.OnStaleResume:
	default:
		return newErr(ErrValidation, "agent '%s': onStale %q: use flag, restart or resume", spec.ID, spec.OnStale)
	}
	if err := budget.Validate(spec.ID, spec.MaxBudgetUsd, spec.MaxTurns); err != nil {
		return err
	}
	if spec.Parent != "" {
		if err := store.ValidID(spec.Parent); err != nil {
			return newErr(ErrValidation, "agent '%s': parent %v", spec.ID, err)
		}
		if spec.Parent == spec.ID {
			return newErr(ErrValidation, "agent '%s' cannot be its own parent", spec.ID)
		}
	}
	return nil
}

// applySpec copies the user-set fields of spec into r, and its grants (nil:
// not sandboxed).
func applySpec(r *store.Record, spec AgentSpec, g *sandbox.Grants) {
	r.Sandbox = g
	r.Name, r.Command, r.Args, r.Env, r.Cwd = spec.Name, spec.Command, append([]string{}, spec.Args...), spec.Env, spec.Cwd
	r.Profile, r.ResumeArgs = spec.Profile, spec.ResumeArgs
	r.CompletionPattern, r.ErrorPattern = spec.CompletionPattern, spec.ErrorPattern
	r.KeepAlive, r.AutoStartOnRestore = spec.KeepAlive, spec.AutoStartOnRestore
	r.TimeoutSec, r.GraceSec, r.StaleCheck, r.OnStale = spec.TimeoutSec, spec.GraceSec, spec.StaleCheck, spec.OnStale
	r.Parent, r.StopWithParent = spec.Parent, spec.StopWithParent
	r.MaxBudgetUsd, r.MaxTurns = spec.MaxBudgetUsd, spec.MaxTurns
}

// CreateAgent validates spec and writes a new not_started record. Nothing is
// written when spec is invalid or the id is taken.
func (e *Engine) CreateAgent(projectID string, spec AgentSpec) (*store.Record, error) {
	p, err := e.project(projectID)
	if err != nil {
		return nil, err
	}
	if err := validateSpec(p, &spec); err != nil {
		return nil, err
	}
	// Everything is checked before anything is made (the worktree, the
	// agent CLI's state folder, the log): a refused request leaves nothing.
	var worktree []string
	if spec.Workspace != nil && spec.Workspace.Worktree && (spec.Permissions != nil || spec.Caller != nil) {
		worktree = append(worktree, e.wt.Dir(p.info.ID, spec.ID)) // a sandboxed agent writes in its worktree
	}
	plan, err := e.planGrants(&spec, worktree...)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	_, taken := p.agents[spec.ID]
	p.mu.Unlock()
	if taken {
		return nil, errAlreadyExists(spec.ID)
	}
	ws, err := e.makeWorktree(context.Background(), p, &spec)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*store.Record, error) {
		if ws != nil { // made for this agent only: nothing of it is kept
			e.wt.Undo(ws, spec.ID)
		}
		return nil, err
	}
	grants, err := plan.make(e)
	if err != nil {
		return fail(err)
	}
	now := e.clock.Now().UTC()
	rec := &store.Record{ID: spec.ID, ProjectID: projectID, Status: lifecycle.NotStarted,
		Desired: lifecycle.DesiredStopped, Attached: true, CreatedAt: now, LogPath: e.st.LogPath(projectID, spec.ID)}
	applySpec(rec, spec, grants)
	rec.Workspace = ws
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.agents[spec.ID]; ok {
		return fail(errAlreadyExists(spec.ID))
	}
	if err := e.saveGrants(rec); err != nil {
		return fail(fmt.Errorf("write sandbox.json of '%s': %w", spec.ID, err))
	}
	if err := e.st.SaveRecord(rec); err != nil {
		return fail(fmt.Errorf("write record of '%s': %w", spec.ID, err))
	}
	a := e.newAgent(p, rec)
	p.agents[spec.ID] = a
	if ws != nil {
		e.goTask(func() { e.wt.Watch(a) })
	}
	e.appendEvent(projectID, store.Event{Time: now, Event: "created", AgentID: spec.ID, To: string(lifecycle.NotStarted)})
	e.log.Info().Str("project", projectID).Str("agent", spec.ID).Str("command", spec.Command).Msg("agent created")
	snap := rec.Clone()
	e.emit(EventAgentState, snap)
	return snap, nil
}

// UpdateAgent changes the user-set fields of an agent that is not live.
func (e *Engine) UpdateAgent(projectID string, spec AgentSpec) (*store.Record, error) {
	p, a, err := e.agent(projectID, spec.ID)
	if err != nil {
		return nil, err
	}
	if err := validateSpec(p, &spec); err != nil {
		return nil, err
	}
	a.mu.Lock()
	if a.rec.Status.Live() || a.starting != nil { // refused before anything is made for the edit
		a.mu.Unlock()
		return nil, newErr(ErrIsRunning, "Process is running. Stop it before editing.")
	}
	if worktrees.Has(a.rec) { // the worktree stays; the cwd is in it
		w := *a.rec.Workspace
		spec.Cwd = worktrees.Into(&w, p.info.Path, spec.Cwd)
		if spec.Permissions != nil {
			spec.Permissions = worktrees.WithWrite(*spec.Permissions, w.Path)
		}
	}
	a.mu.Unlock()
	plan, err := e.planGrants(&spec)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rec.Status.Live() || a.starting != nil {
		return nil, newErr(ErrIsRunning, "Process is running. Stop it before editing.")
	}
	grants, err := plan.make(e)
	if err != nil {
		return nil, err
	}
	spec.Env = secrets.Unmask(spec.Env, a.rec.Env) // a masked value sent back means "unchanged"
	next := a.rec.Clone()
	next.Sandbox = grants
	if err := e.saveGrants(next); err != nil {
		return nil, fmt.Errorf("write sandbox.json of '%s': %w", spec.ID, err)
	}
	if err := e.update(a, func(r *store.Record) { applySpec(r, spec, grants) }); err != nil {
		return nil, err
	}
	e.appendEvent(projectID, store.Event{Time: e.clock.Now().UTC(), Event: "updated", AgentID: spec.ID})
	return e.snapshot(a), nil
}

// RemoveAgent forgets an agent. A live agent needs force, which stops it
// first. The log is kept unless deleteLog. Once removed, nothing of the
// engine — a recovery under way, a timer — writes its record or starts it
// again: its lifetime has ended. A worktree agent's worktree is removed
// and its branch kept (Remove chooses).
func (e *Engine) RemoveAgent(ctx context.Context, projectID, agentID string, force, deleteLog bool) error {
	return e.Remove(ctx, projectID, agentID, RemoveOptions{Force: force, DeleteLog: deleteLog})
}

// Remove is RemoveAgent with the choice of what becomes of a worktree
// agent's worktree (o.Worktree). A worktree with uncommitted changes is
// refused (WorktreeDirty) before anything is stopped, unless
// o.DiscardChanges; a merge that conflicts is aborted (MergeConflict) and
// the agent is not removed.
func (e *Engine) Remove(ctx context.Context, projectID, agentID string, o RemoveOptions) error {
	force, deleteLog := o.Force, o.DeleteLog
	p, a, err := e.agent(projectID, agentID)
	if err != nil {
		return err
	}
	if err := e.wt.CheckEnd(ctx, a, o.ending()); err != nil {
		return err
	}
	a.mu.Lock()
	if !e.awaitStart(ctx, a) { // a start under way: removed after it, like a run
		a.mu.Unlock()
		return ctx.Err()
	}
	live := a.rec.Status.Live()
	a.mu.Unlock()
	if live && !force {
		return newErr(ErrIsRunning, "Process is running. Stop it before removing.")
	}
	e.stopChildren(ctx, p, agentID)
	if live {
		if _, err := e.stop(ctx, a, nil, e.clock.Now()); err != nil && !isKind(err, ErrNotRunning) {
			return err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gone() {
		return errNotFound(agentID)
	}
	if a.rec.Status.Live() {
		return newErr(ErrIsRunning, "Process is running. Stop it before removing.")
	}
	if err := e.wt.End(ctx, a, o.ending()); err != nil {
		return err
	}
	e.cancelRestart(a)
	if a.rec.Status == lifecycle.Queued {
		e.queues.Left(&a.p.q, a)
	}
	a.end()
	if err := e.st.RemoveAgent(projectID, agentID, !deleteLog); err != nil {
		if !errors.Is(err, store.ErrLeftovers) {
			return fmt.Errorf("remove agent '%s': %w", agentID, err)
		}
		// Removed: its record is gone. Only files remain, which a next
		// agent of that id does not read (its own run files replace them).
		e.log.Warn().Err(err).Str("project", projectID).Str("agent", agentID).Msg("agent removed; some of its files remain")
	}
	p.mu.Lock()
	delete(p.agents, agentID)
	p.mu.Unlock()
	e.appendEvent(projectID, store.Event{Time: e.clock.Now().UTC(), Event: "removed", AgentID: agentID,
		From: string(a.rec.Status), Data: map[string]any{"logDeleted": deleteLog}})
	e.log.Info().Str("project", projectID).Str("agent", agentID).Bool("logDeleted", deleteLog).Msg("agent removed")
	e.emit(EventAgentRemoved, AgentRef{ProjectID: projectID, AgentID: agentID})
	e.needs.Forget(projectID, agentID)
	return nil
}

// stopChildren stops the agents a parent created through the MCP server
// (those that asked to be stopped with it, the default), before the parent
// is removed.
func (e *Engine) stopChildren(ctx context.Context, p *project, parentID string) {
	var kids []*agent
	for _, k := range p.list() {
		k.mu.Lock()
		if k.rec.Parent == parentID && (k.rec.StopWithParent == nil || *k.rec.StopWithParent) &&
			(k.rec.Status.Live() || k.rec.Status == lifecycle.Queued || k.restartTimer != nil) {
			kids = append(kids, k)
		}
		k.mu.Unlock()
	}
	var wg sync.WaitGroup
	for _, k := range kids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.stop(ctx, k, nil, e.clock.Now()); err != nil && !isKind(err, ErrNotRunning) {
				e.log.Warn().Err(err).Str("agent", k.id()).Str("parent", parentID).Msg("cannot stop a child of a removed agent")
			}
		}()
	}
	wg.Wait()
	if len(kids) > 0 {
		e.appendEvent(p.info.ID, store.Event{Time: e.clock.Now().UTC(), Event: "children:stopped", AgentID: parentID,
			Data: map[string]any{"children": len(kids)}})
	}
}

// LogTail returns the last n lines of an agent's log (n <= 0: 1000).
func (e *Engine) LogTail(projectID, agentID string, n int) ([]byte, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	path := a.rec.LogPath
	a.mu.Unlock()
	if n <= 0 {
		n = 1000
	}
	return logtail.Lines(path, n, 16<<20)
}

func isKind(err, kind error) bool { return errors.Is(err, kind) }
