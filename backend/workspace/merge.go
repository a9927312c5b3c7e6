package workspace

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// A merge takes what the Diff shows (SPEC, Workspaces): the worktree's
// uncommitted work — untracked files included, .gitignore respected — is
// committed first on its branch (as the user's own git identity, with a
// message the user can edit), then the branch is merged into the base in the
// project's checkout: a fast-forward, or a merge commit. A conflict there is
// aborted with nothing lost (the work stays committed on the branch) and
// leaves two ways out: keep the branch and resolve by hand, or ask the agent
// (StartBaseMerge): the base is merged into the branch in the worktree with
// --no-commit, the conflicts left in the files for the agent, whose next
// merge commits the resolution. A sandboxed agent cannot write .git, so
// every commit of its work is the engine's, made at merge.

// ConflictError is a merge that conflicted: it was aborted, nothing was
// lost, the worktree and the branch are as they were (with the uncommitted
// work committed on the branch, Committed).
type ConflictError struct {
	Branch    string   `json:"branch"`
	Base      string   `json:"base"`
	Files     []string `json:"files"` // the files that conflicted
	Committed string   `json:"committed,omitempty"`
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("merging %s into %s conflicts in %s; the merge was aborted, the worktree and the branch are kept",
		e.Branch, e.Base, strings.Join(e.Files, ", "))
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// MergeResult is what a merge did.
type MergeResult struct {
	// Committed is the commit of the uncommitted work ("" when there was
	// none).
	Committed string `json:"committed,omitempty"`
	// Merged: the base has the branch's work now; UpToDate: it had it
	// already; FastForward: the base moved to the branch's tip (no merge
	// commit). Head is the base's tip after.
	Merged      bool   `json:"merged"`
	UpToDate    bool   `json:"upToDate,omitempty"`
	FastForward bool   `json:"fastForward,omitempty"`
	Head        string `json:"head,omitempty"`
	// Conflict is the merge into the base that conflicted and was aborted.
	Conflict *ConflictError `json:"conflict,omitempty"`
}

// mergeable checks, before anything is done, that w's branch can be merged
// into its base in the project's checkout: the base is a branch, checked
// out there. w is pinned.
func mergeable(ctx context.Context, w Workspace) error {
	rg := w.repoGit()
	if w.Base == "" || w.Base == w.BaseCommit || !rg.branchExists(ctx, w.Base) {
		return fmt.Errorf("cannot merge %s: its base %q is not a branch of %s (%w); keep the branch and merge it by hand",
			w.Branch, w.Base, w.Repo, ErrNotBranch)
	}
	cur, err := rg.currentBranch(ctx)
	if err != nil {
		return err
	}
	if cur != w.Base {
		on := "a detached HEAD"
		if cur != "" {
			on = "branch " + cur
		}
		return fmt.Errorf("cannot merge %s into %s: the project's checkout %s is on %s; check out %s there first",
			w.Branch, w.Base, w.Repo, on, w.Base)
	}
	return nil
}

// MergeIntoBase merges w into its base as the Diff shows it: its uncommitted work
// committed first (msg; empty: DefaultMessage), then the branch merged into
// the base in the main checkout (w.Repo, which must have the base checked
// out): a fast-forward when the base has not moved, else a merge commit. A
// conflict is aborted and returned as a *ConflictError (also in the
// result): nothing is lost, the work stays committed on the branch.
func MergeIntoBase(ctx context.Context, w Workspace, msg string) (MergeResult, error) {
	var res MergeResult
	w, m := open(ctx, w)
	if m.text != "" && !m.treeGone() {
		return res, &vanishedError{m.text}
	}
	if err := mergeable(ctx, w); err != nil {
		return res, err
	}
	rg := w.repoGit()
	ff, err := rg.isAncestor(ctx, "refs/heads/"+w.Base, "refs/heads/"+w.Branch)
	if err != nil {
		return res, err
	}
	if !ff { // a merge commit: as the user, checked before anything is done
		if _, err := rg.identity(ctx); err != nil {
			return res, err
		}
	}
	if !m.treeGone() { // a worktree folder that vanished has nothing to commit: its branch is merged
		if res.Committed, err = commitWork(ctx, w, msg); err != nil {
			return res, err
		}
	}
	if err := mergeInto(ctx, w, &res); err != nil {
		return res, err
	}
	return res, nil
}

// mergeInto merges w's branch into its base in the main checkout. w is
// pinned and mergeable.
func mergeInto(ctx context.Context, w Workspace, res *MergeResult) error {
	rg := w.repoGit()
	branch, base := "refs/heads/"+w.Branch, "refs/heads/"+w.Base
	up, err := rg.isAncestor(ctx, branch, base)
	if err != nil {
		return err
	}
	if up {
		res.Merged, res.UpToDate = true, true
		res.Head, _ = rg.commitOf(ctx, base)
		return nil
	}
	ff, err := rg.isAncestor(ctx, base, branch)
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("Merge branch '%s' (Shepherd)", w.Branch)
	_, err = rg.run(ctx, "merge", "--ff", "--no-edit", "--no-stat", "-m", msg, branch)
	if err == nil {
		res.Merged, res.FastForward = true, ff
		res.Head, _ = rg.commitOf(ctx, "HEAD")
		return nil
	}
	kept := ""
	if res.Committed != "" {
		kept = fmt.Sprintf(" (the uncommitted work was committed on %s as %s)", w.Branch, short(res.Committed))
	}
	if !rg.merging(ctx) {
		// Refused before it began (local changes in the way): nothing to undo.
		return fmt.Errorf("merge %s into %s in %s: %w%s", w.Branch, w.Base, w.Repo, err, kept)
	}
	out, _ := rg.run(ctx, "diff", "--name-only", "-z", "--diff-filter=U")
	files := splitZ(out)
	if _, aerr := rg.run(ctx, "merge", "--abort"); aerr != nil {
		return errors.Join(fmt.Errorf("merge %s into %s: %w", w.Branch, w.Base, err), fmt.Errorf("abort the merge: %w", aerr))
	}
	res.Conflict = &ConflictError{Branch: w.Branch, Base: w.Base, Files: files, Committed: res.Committed}
	return res.Conflict
}

// MergePlan is what a merge of w would do, for the user to look at before:
// what is committed first and with which message, as whom, and what stands
// in the way.
type MergePlan struct {
	Branch string `json:"branch"`
	Base   string `json:"base"`
	Repo   string `json:"repo"`
	Ahead  int    `json:"ahead"`
	Behind int    `json:"behind"`
	// Uncommitted is what the merge commits first (every untracked file,
	// .gitignore respected), with Message, as Identity.
	Uncommitted []Change `json:"uncommitted"`
	Message     string   `json:"message"`
	Identity    string   `json:"identity,omitempty"`
	// Merging: the base is being merged into the branch in the worktree (the
	// agent was asked to); Conflicts, the files that still hold markers.
	Merging   bool     `json:"merging"`
	Conflicts []string `json:"conflicts,omitempty"`
	// UpToDate: the base has everything already (nothing to merge).
	UpToDate bool `json:"upToDate"`
	// Blocked says why the merge cannot happen now ("" when it can).
	Blocked string `json:"blocked,omitempty"`
	// Running is set by the engine when the agent runs now: it merges once
	// the run has ended (a remove stops it first).
	Running string `json:"running,omitempty"`
}

// PlanMerge says what Merge would do now.
func PlanMerge(ctx context.Context, w Workspace) (MergePlan, error) {
	plan := MergePlan{Branch: w.Branch, Base: w.Base, Repo: w.Repo, Uncommitted: []Change{}}
	w, m := open(ctx, w)
	if m.text != "" && !m.treeGone() {
		plan.Blocked = m.text
		return plan, nil
	}
	rg := w.repoGit()
	who, idErr := rg.identity(ctx)
	var changes []Change
	if !m.treeGone() {
		tg := w.treeGit()
		var err error
		if changes, err = tg.changes(ctx, "all"); err != nil {
			return plan, err
		}
		who, idErr = tg.identity(ctx)
		plan.Merging = tg.merging(ctx)
	}
	if changes != nil {
		plan.Uncommitted = changes
	}
	plan.Message = DefaultMessage(w, changes, plan.Merging)
	if plan.Merging {
		plan.Conflicts = unresolved(w.Path, conflicted(changes))
	}
	if out, err := rg.line(ctx, "rev-list", "--left-right", "--count", baseRef(ctx, w)+"...refs/heads/"+w.Branch); err == nil {
		plan.Behind, plan.Ahead, _ = parseCounts(out)
	}
	plan.UpToDate = plan.Ahead == 0 && len(changes) == 0 && !plan.Merging
	plan.Identity = who
	switch err := mergeable(ctx, w); {
	case err != nil:
		plan.Blocked = err.Error()
	case len(plan.Conflicts) > 0:
		plan.Blocked = (&UnresolvedError{Path: w.Path, Files: plan.Conflicts}).Error()
	case idErr != nil && !plan.UpToDate:
		plan.Blocked = idErr.Error()
	}
	return plan, nil
}

// BaseMerge is a merge of the base into the worktree's branch, started for
// the agent to resolve (StartBaseMerge).
type BaseMerge struct {
	// Committed is the commit of the uncommitted work made first.
	Committed string `json:"committed,omitempty"`
	// Conflicts are the files left with conflict markers for the agent.
	Conflicts []string `json:"conflicts"`
	// Clean: the base merged without a conflict and was committed (Head):
	// there is nothing to ask the agent.
	Clean bool   `json:"clean,omitempty"`
	Head  string `json:"head,omitempty"`
	// Resumed: the merge was already under way (the agent is asked again).
	Resumed bool `json:"resumed,omitempty"`
}

// StartBaseMerge starts merging the base into w's branch in the worktree, for the
// agent to resolve: its uncommitted work is committed first (msg), then
// `git merge --no-commit <base>` runs there (pinned and hardened, as
// always), leaving the conflicts in the files. The next MergeIntoBase commits the
// resolution. A merge already under way is left as it is (Resumed).
func StartBaseMerge(ctx context.Context, w Workspace, msg string) (BaseMerge, error) {
	bm := BaseMerge{Conflicts: []string{}}
	w, m := open(ctx, w)
	if m.text != "" {
		return bm, &vanishedError{m.text}
	}
	rg, tg := w.repoGit(), w.treeGit()
	if w.Base == "" || w.Base == w.BaseCommit || !rg.branchExists(ctx, w.Base) {
		return bm, fmt.Errorf("cannot merge the base into %s: its base %q is not a branch of %s (%w)", w.Branch, w.Base, w.Repo, ErrNotBranch)
	}
	if tg.merging(ctx) {
		changes, err := tg.changes(ctx, "normal")
		if err != nil {
			return bm, err
		}
		bm.Resumed, bm.Conflicts = true, unresolved(w.Path, conflicted(changes))
		if bm.Conflicts == nil {
			bm.Conflicts = []string{}
		}
		return bm, nil
	}
	if _, err := tg.identity(ctx); err != nil {
		return bm, err
	}
	var err error
	if bm.Committed, err = commitWork(ctx, w, msg); err != nil {
		return bm, err
	}
	base := "refs/heads/" + w.Base
	_, err = tg.run(ctx, "merge", "--no-commit", "--no-ff", "--no-stat", base)
	if err == nil {
		if tg.merging(ctx) {
			m := fmt.Sprintf("Merge branch '%s' into %s", w.Base, w.Branch)
			if _, err := tg.run(ctx, "commit", "--quiet", "--no-verify", "-m", m); err != nil {
				return bm, fmt.Errorf("commit the merge of %s: %w", w.Base, err)
			}
		}
		bm.Clean = true
		bm.Head, _ = tg.line(ctx, "rev-parse", "HEAD")
		return bm, nil
	}
	if !tg.merging(ctx) {
		return bm, fmt.Errorf("merge %s into %s in %s: %w", w.Base, w.Branch, w.Path, err)
	}
	changes, cerr := tg.changes(ctx, "normal")
	if cerr != nil {
		return bm, cerr
	}
	bm.Conflicts = conflicted(changes)
	if bm.Conflicts == nil {
		bm.Conflicts = []string{}
	}
	return bm, nil
}
