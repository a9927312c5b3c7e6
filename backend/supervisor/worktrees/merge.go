package worktrees

import (
	"context"
	"fmt"
	"strings"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/errs"
	"shepherd/backend/supervisor/hook"
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

// Resolve is what asking an agent to resolve a merge did.
type Resolve struct {
	workspace.BaseMerge
	// Instruction is the prompt the agent resumes with ("" when there was
	// nothing to resolve: Clean); Status, the agent's after (resumed, or
	// queued at QueuePosition).
	Instruction   string
	Status        lifecycle.Status
	QueuePosition int
}

// idle is a's workspace, and an error when it has none or is live (its work
// may be half-written: a commit would take it as it is). a's lock is held.
func idle(a hook.Agent, what string) (workspace.Workspace, error) {
	r := a.Rec()
	ws, err := of(a)
	if err != nil {
		return ws, err
	}
	if r.Status.Live() || r.Status == lifecycle.Queued {
		return workspace.Workspace{}, errs.New(errs.IsRunning, "agent '%s' is %s: stop it or wait for its run to end before %s",
			r.ID, r.Status, what)
	}
	return ws, nil
}

// MergePlan says what merging an agent's worktree would do now: what is
// committed first, the default message, as whom, and what stands in the
// way.
func (w *Worktrees) MergePlan(ctx context.Context, projectID, agentID string) (workspace.MergePlan, error) {
	a, err := w.core.Agent(projectID, agentID)
	if err != nil {
		return workspace.MergePlan{}, err
	}
	a.Lock()
	ws, err := of(a)
	status := a.Rec().Status
	a.Unlock()
	if err != nil {
		return workspace.MergePlan{}, err
	}
	plan, err := workspace.PlanMerge(ctx, ws)
	if err != nil {
		return plan, kindOf(agentID, err)
	}
	if status.Live() || status == lifecycle.Queued {
		plan.Running = fmt.Sprintf("agent '%s' is %s: stop it or wait for its run to end before merging", agentID, status)
	}
	return plan, nil
}

// Merge merges an agent's worktree into its base, keeping the agent: its
// uncommitted work committed first (message; empty: the default message),
// then the branch merged in the project's checkout. A conflict is aborted
// (nothing lost) and answered in the result, not as an error.
func (w *Worktrees) Merge(ctx context.Context, projectID, agentID, message string) (workspace.MergeResult, error) {
	a, err := w.core.Agent(projectID, agentID)
	if err != nil {
		return workspace.MergeResult{}, err
	}
	a.Lock()
	ws, err := idle(a, "merging")
	if err != nil {
		a.Unlock()
		return workspace.MergeResult{}, err
	}
	// Held while git works: no start in between.
	res, err := workspace.MergeIntoBase(ctx, ws, message)
	now := w.core.Clock().Now().UTC()
	if res.Committed != "" {
		w.core.Event(projectID, store.Event{Time: now, Event: "worktree:committed", AgentID: agentID,
			Data: map[string]any{"branch": ws.Branch, "commit": res.Committed}})
	}
	switch {
	case res.Conflict != nil:
		w.core.Event(projectID, store.Event{Time: now, Event: "worktree:conflict", AgentID: agentID,
			Data: map[string]any{"branch": ws.Branch, "base": ws.Base, "files": res.Conflict.Files}})
		err = nil
	case err == nil:
		w.core.Event(projectID, store.Event{Time: now, Event: "worktree:merged", AgentID: agentID,
			Data: map[string]any{"branch": ws.Branch, "base": ws.Base, "head": res.Head, "fastForward": res.FastForward, "upToDate": res.UpToDate}})
	}
	a.Unlock()
	if err != nil {
		return res, kindOf(agentID, err)
	}
	w.log.Info().Str("project", projectID).Str("agent", agentID).Bool("merged", res.Merged).Str("committed", res.Committed).Msg("worktree merge")
	w.refreshAfter(projectID, agentID)
	return res, nil
}

// instruction is what an agent asked to resolve a merge's conflicts is told.
func instruction(ws workspace.Workspace, files []string) string {
	return fmt.Sprintf("Shepherd is merging the base branch %s into your branch %s in this worktree, "+
		"and these files conflict: %s. Resolve the conflicts: edit each of these files so that it keeps what both "+
		"sides meant and no conflict markers (<<<<<<<, =======, >>>>>>>) are left. Do not commit, and do not run "+
		"git merge, git reset or git checkout: the repository's .git may be read-only to you, and Shepherd commits "+
		"the resolution when the user merges. Say briefly what you decided for each file.",
		ws.Base, ws.Branch, strings.Join(files, ", "))
}

// AskToResolve asks an agent to merge its base and resolve the conflicts:
// its uncommitted work is committed first (message), the engine runs `git
// merge --no-commit <base>` in its worktree (pinned and hardened), and the
// agent is resumed in its session, through the queue, with an instruction
// naming the conflicted files. Checked before anything is done: the agent
// is not live and its resume can bring an instruction (canInstruct, the
// core's rule, says why not). A base that merges without a conflict is
// committed at once and nobody is asked (Clean).
func (w *Worktrees) AskToResolve(ctx context.Context, projectID, agentID, message string, canInstruct func(r *store.Record) error) (Resolve, error) {
	a, err := w.core.Agent(projectID, agentID)
	if err != nil {
		return Resolve{}, err
	}
	a.Lock()
	defer a.Unlock()
	ws, err := idle(a, "asking it to resolve")
	if err != nil {
		return Resolve{}, err
	}
	if err := canInstruct(a.Rec()); err != nil {
		return Resolve{}, err
	}
	bm, err := workspace.StartBaseMerge(ctx, ws, message)
	res := Resolve{BaseMerge: bm}
	if bm.Committed != "" {
		w.core.Event(projectID, store.Event{Time: w.core.Clock().Now().UTC(), Event: "worktree:committed", AgentID: agentID,
			Data: map[string]any{"branch": ws.Branch, "commit": bm.Committed}})
	}
	if err != nil {
		return res, kindOf(agentID, err)
	}
	defer w.refreshAfter(projectID, agentID)
	if bm.Clean {
		w.core.Event(projectID, store.Event{Time: w.core.Clock().Now().UTC(), Event: "worktree:base-merged", AgentID: agentID,
			Data: map[string]any{"branch": ws.Branch, "base": ws.Base, "head": bm.Head}})
		res.Status = a.Rec().Status
		return res, nil
	}
	if len(bm.Conflicts) == 0 {
		return res, errs.New(errs.Worktree, "agent '%s': the merge of %s into %s is under way in %s with no conflict left: merge it now",
			agentID, ws.Base, ws.Branch, ws.Path)
	}
	res.Instruction = instruction(ws, bm.Conflicts)
	if err := w.core.Update(a, func(r *store.Record) { r.ResumePrompt = res.Instruction }); err != nil {
		return res, err
	}
	w.core.Event(projectID, store.Event{Time: w.core.Clock().Now().UTC(), Event: "worktree:resolve-asked", AgentID: agentID,
		Data: map[string]any{"branch": ws.Branch, "base": ws.Base, "files": bm.Conflicts}})
	if err := w.core.Resume(a); err != nil {
		if uerr := w.core.Update(a, func(r *store.Record) { r.ResumePrompt = "" }); uerr != nil {
			w.log.Warn().Err(uerr).Str("agent", agentID).Msg("cannot take back the instruction of a resume that failed")
		}
		return res, err
	}
	snap := w.core.Snapshot(a)
	res.Status, res.QueuePosition = snap.Status, snap.QueuePosition
	return res, nil
}
