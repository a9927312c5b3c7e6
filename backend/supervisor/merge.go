package supervisor

import (
	"context"
	"fmt"
	"strings"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
	"shepherd/backend/workspace"
)

// A merge takes what the Diff shows (SPEC, Workspaces; package workspace,
// merge.go): the engine commits the worktree's uncommitted work — as the
// user, with the message they edited — then merges the branch into the
// base in the project's checkout. A sandboxed agent cannot write .git, so
// this is how its work gets committed. A conflict is aborted with nothing
// lost and has two ways out: keep the branch and resolve by hand, or ask
// the agent (AskToResolve): the engine merges the base into the branch in
// the worktree with --no-commit, leaving the conflicts in the files, and
// resumes the agent in its session, through the queue, with an instruction
// naming them; the next merge commits the resolution.

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

// worktreeOf is a's workspace, and an error when it has none or is live
// (its work may be half-written: a commit would take it as it is). a.mu is
// held.
func worktreeOf(a *agent, what string) (workspace.Workspace, error) {
	if !hasWorktree(a.rec) {
		return workspace.Workspace{}, errNoWorktree(a.rec.ID)
	}
	if a.rec.Status.Live() || a.rec.Status == lifecycle.Queued {
		return workspace.Workspace{}, newErr(ErrIsRunning, "agent '%s' is %s: stop it or wait for its run to end before %s",
			a.rec.ID, a.rec.Status, what)
	}
	return *a.rec.Workspace, nil
}

// WorktreeMergePlan says what merging an agent's worktree would do now:
// what is committed first, the default message, as whom, and what stands
// in the way.
func (e *Engine) WorktreeMergePlan(ctx context.Context, projectID, agentID string) (workspace.MergePlan, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return workspace.MergePlan{}, err
	}
	a.mu.Lock()
	if !hasWorktree(a.rec) {
		a.mu.Unlock()
		return workspace.MergePlan{}, errNoWorktree(agentID)
	}
	w, live := *a.rec.Workspace, a.rec.Status.Live() || a.rec.Status == lifecycle.Queued
	status := a.rec.Status
	a.mu.Unlock()
	plan, err := workspace.PlanMerge(ctx, w)
	if err != nil {
		return plan, worktreeErr(agentID, err)
	}
	if live {
		plan.Running = fmt.Sprintf("agent '%s' is %s: stop it or wait for its run to end before merging", agentID, status)
	}
	return plan, nil
}

// MergeWorktree merges an agent's worktree into its base, keeping the
// agent: its uncommitted work committed first (message; empty: the default
// message), then the branch merged in the project's checkout. A conflict is
// aborted (nothing lost) and answered in the result, not as an error.
func (e *Engine) MergeWorktree(ctx context.Context, projectID, agentID, message string) (workspace.MergeResult, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return workspace.MergeResult{}, err
	}
	a.mu.Lock()
	w, err := worktreeOf(a, "merging")
	if err != nil {
		a.mu.Unlock()
		return workspace.MergeResult{}, err
	}
	// Held while git works: no start in between.
	res, err := workspace.MergeIntoBase(ctx, w, message)
	now := e.clock.Now().UTC()
	if res.Committed != "" {
		e.appendEvent(projectID, store.Event{Time: now, Event: "worktree:committed", AgentID: agentID,
			Data: map[string]any{"branch": w.Branch, "commit": res.Committed}})
	}
	switch {
	case res.Conflict != nil:
		e.appendEvent(projectID, store.Event{Time: now, Event: "worktree:conflict", AgentID: agentID,
			Data: map[string]any{"branch": w.Branch, "base": w.Base, "files": res.Conflict.Files}})
		err = nil
	case err == nil:
		e.appendEvent(projectID, store.Event{Time: now, Event: "worktree:merged", AgentID: agentID,
			Data: map[string]any{"branch": w.Branch, "base": w.Base, "head": res.Head, "fastForward": res.FastForward, "upToDate": res.UpToDate}})
	}
	a.mu.Unlock()
	if err != nil {
		return res, worktreeErr(agentID, err)
	}
	e.log.Info().Str("project", projectID).Str("agent", agentID).Bool("merged", res.Merged).Str("committed", res.Committed).Msg("worktree merge")
	e.refreshAfter(projectID, agentID)
	return res, nil
}

// resolveInstruction is what an agent asked to resolve a merge's conflicts
// is told.
func resolveInstruction(w workspace.Workspace, files []string) string {
	return fmt.Sprintf("Shepherd is merging the base branch %s into your branch %s in this worktree, "+
		"and these files conflict: %s. Resolve the conflicts: edit each of these files so that it keeps what both "+
		"sides meant and no conflict markers (<<<<<<<, =======, >>>>>>>) are left. Do not commit, and do not run "+
		"git merge, git reset or git checkout: the repository's .git may be read-only to you, and Shepherd commits "+
		"the resolution when the user merges. Say briefly what you decided for each file.",
		w.Base, w.Branch, strings.Join(files, ", "))
}

// AskToResolve asks an agent to merge its base and resolve the conflicts:
// its uncommitted work is committed first (message), the engine runs `git
// merge --no-commit <base>` in its worktree (pinned and hardened), and the
// agent is resumed in its session, through the queue, with an instruction
// naming the conflicted files. Checked before anything is done: the agent
// is not live and its resume can bring an instruction. A base that merges
// without a conflict is committed at once and nobody is asked (Clean).
func (e *Engine) AskToResolve(ctx context.Context, projectID, agentID, message string) (ResolveResult, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return ResolveResult{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	w, err := worktreeOf(a, "asking it to resolve")
	if err != nil {
		return ResolveResult{}, err
	}
	if err := notResumable(a.rec); err != nil {
		return ResolveResult{}, newErr(ErrNotResumable, "%v; keep the branch and resolve the conflicts by hand", err)
	}
	if !canInstruct(a.rec) {
		return ResolveResult{}, newErr(ErrNotResumable, "agent '%s' cannot be given an instruction: it is not a Claude Code or Codex agent "+
			"and its resume arguments have no %s; keep the branch and resolve the conflicts by hand", agentID, promptPlaceholder)
	}
	bm, err := workspace.StartBaseMerge(ctx, w, message)
	res := ResolveResult{BaseMerge: bm}
	if bm.Committed != "" {
		e.appendEvent(projectID, store.Event{Time: e.clock.Now().UTC(), Event: "worktree:committed", AgentID: agentID,
			Data: map[string]any{"branch": w.Branch, "commit": bm.Committed}})
	}
	if err != nil {
		return res, worktreeErr(agentID, err)
	}
	defer e.refreshAfter(projectID, agentID)
	if bm.Clean {
		e.appendEvent(projectID, store.Event{Time: e.clock.Now().UTC(), Event: "worktree:base-merged", AgentID: agentID,
			Data: map[string]any{"branch": w.Branch, "base": w.Base, "head": bm.Head}})
		res.Status = a.rec.Status
		return res, nil
	}
	if len(bm.Conflicts) == 0 {
		return res, newErr(ErrWorktree, "agent '%s': the merge of %s into %s is under way in %s with no conflict left: merge it now",
			agentID, w.Base, w.Branch, w.Path)
	}
	res.Instruction = resolveInstruction(w, bm.Conflicts)
	if err := e.update(a, func(r *store.Record) { r.ResumePrompt = res.Instruction }); err != nil {
		return res, err
	}
	e.appendEvent(projectID, store.Event{Time: e.clock.Now().UTC(), Event: "worktree:resolve-asked", AgentID: agentID,
		Data: map[string]any{"branch": w.Branch, "base": w.Base, "files": bm.Conflicts}})
	if err := e.launch(a, actResume); err != nil {
		_ = e.update(a, func(r *store.Record) { r.ResumePrompt = "" })
		return res, err
	}
	snap := e.snapshot(a)
	res.Status, res.QueuePosition = snap.Status, snap.QueuePosition
	return res, nil
}

// refreshAfter looks at an agent's worktree again, off the caller's locks,
// and pushes agent:worktree.
func (e *Engine) refreshAfter(projectID, agentID string) {
	e.goTask(func() {
		if _, err := e.RefreshWorktree(e.ctx, projectID, agentID); err != nil {
			e.log.Debug().Err(err).Str("agent", agentID).Msg("worktree refresh")
		}
	})
}
