package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// What happens to a worktree when its agent is removed.
const (
	Keep    = "keep"    // remove the worktree folder, keep the branch
	Merge   = "merge"   // merge the branch into the base, then remove both
	Discard = "discard" // remove the worktree and delete the branch
)

// ValidEnd checks a choice of Keep, Merge or Discard.
func ValidEnd(how string) error {
	switch how {
	case Keep, Merge, Discard:
		return nil
	}
	return fmt.Errorf("worktree choice %q: use keep, merge or discard", how)
}

// ConflictError is a merge that conflicted: it was aborted, nothing was
// lost, the worktree and the branch are as they were.
type ConflictError struct {
	Branch, Base string
	Files        []string // the files that conflicted
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("merging %s into %s conflicts in %s; the merge was aborted, the worktree and the branch are kept",
		e.Branch, e.Base, strings.Join(e.Files, ", "))
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// DirtyError is a worktree with uncommitted changes that a removal would
// lose: the caller asks the user, then forces.
type DirtyError struct{ Path string }

func (e *DirtyError) Error() string {
	return fmt.Sprintf("worktree %s has uncommitted changes, which removing it loses", e.Path)
}

func (e *DirtyError) Unwrap() error { return ErrDirty }

// End removes w as how says (Keep, Merge or Discard). A worktree with
// uncommitted changes refuses with a DirtyError unless force. A merge that
// conflicts is aborted and returns a ConflictError, leaving everything in
// place. A worktree whose folder vanished is pruned, and its branch handled
// as asked.
func End(ctx context.Context, w Workspace, how string, force bool) error {
	if err := ValidEnd(how); err != nil {
		return err
	}
	if _, err := TopLevel(ctx, w.Repo); errors.Is(err, ErrNotRepo) && how != Merge {
		// The project is no longer a git checkout: there is nothing of git's
		// to remove, and a folder git does not know is not ours to delete.
		return nil
	}
	_, statErr := os.Stat(w.Path)
	present := statErr == nil
	if present && !force {
		dirty, err := IsDirty(ctx, w.Path)
		if err != nil && listed(ctx, w) {
			return err
		}
		if dirty {
			return &DirtyError{Path: w.Path}
		}
	}
	if how == Merge {
		if err := MergeInto(ctx, w); err != nil {
			return err
		}
	}
	if present {
		if _, err := git(ctx, w.Repo, "worktree", "remove", "--force", "--", w.Path); err != nil {
			if listed(ctx, w) {
				return fmt.Errorf("remove the worktree: %w", err)
			}
			// Not a worktree of Repo (any more): the folder is not git's to
			// remove, and not ours either.
		}
	}
	if _, err := git(ctx, w.Repo, "worktree", "prune"); err != nil {
		return err
	}
	if how == Keep || !branchExists(ctx, w.Repo, w.Branch) {
		return nil
	}
	flag := "-D" // discard: the branch goes, merged or not
	if how == Merge {
		flag = "-d" // merged: git agrees it is
	}
	if _, err := git(ctx, w.Repo, "branch", flag, "--", w.Branch); err != nil {
		return fmt.Errorf("delete branch %s: %w", w.Branch, err)
	}
	return nil
}

// MergeInto merges w's branch into its base branch in the main checkout
// (w.Repo), which must have the base checked out: a fast-forward when the
// base has not moved, else a merge commit. A conflict is aborted and
// reported as a ConflictError.
func MergeInto(ctx context.Context, w Workspace) error {
	if w.Base == "" || w.Base == w.BaseCommit || !branchExists(ctx, w.Repo, w.Base) {
		return fmt.Errorf("cannot merge %s: its base %q is not a branch of %s (%w); keep the branch and merge it by hand",
			w.Branch, w.Base, w.Repo, ErrNotBranch)
	}
	cur, err := CurrentBranch(ctx, w.Repo)
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
	msg := fmt.Sprintf("Merge branch '%s' (Shepherd)", w.Branch)
	_, err = git(ctx, w.Repo, "merge", "--ff", "--no-edit", "-m", msg, "refs/heads/"+w.Branch)
	if err == nil {
		return nil
	}
	if !merging(ctx, w.Repo) {
		// Refused before it began (local changes in the way): nothing to undo.
		return fmt.Errorf("merge %s into %s: %w", w.Branch, w.Base, err)
	}
	out, _ := git(ctx, w.Repo, "diff", "--name-only", "-z", "--diff-filter=U")
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	if _, aerr := git(ctx, w.Repo, "merge", "--abort"); aerr != nil {
		return errors.Join(fmt.Errorf("merge %s into %s: %w", w.Branch, w.Base, err), fmt.Errorf("abort the merge: %w", aerr))
	}
	return &ConflictError{Branch: w.Branch, Base: w.Base, Files: files}
}

// merging reports whether a merge is under way in repo (MERGE_HEAD).
func merging(ctx context.Context, repo string) bool {
	_, err := gitLine(ctx, repo, "rev-parse", "--verify", "--quiet", "MERGE_HEAD")
	return err == nil
}
