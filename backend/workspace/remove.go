package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// DirtyError is a worktree with uncommitted changes that a removal would
// lose: the caller asks the user, then forces.
type DirtyError struct{ Path string }

func (e *DirtyError) Error() string {
	return fmt.Sprintf("worktree %s has uncommitted changes, which removing it loses", e.Path)
}

func (e *DirtyError) Unwrap() error { return ErrDirty }

// End removes w as how says (Keep, Merge or Discard). A worktree with
// uncommitted changes refuses Keep and Discard with a DirtyError unless
// force; Merge takes them: they are committed first (msg; empty: the
// default message), as the Diff shows them. A merge that conflicts is
// aborted and returns a ConflictError, leaving everything in place. A
// worktree whose folder vanished is pruned, and its branch handled as asked.
func End(ctx context.Context, w Workspace, how string, force bool, msg string) error {
	if err := ValidEnd(how); err != nil {
		return err
	}
	pw, err := Pin(ctx, w)
	if errors.Is(err, ErrNotRepo) && how != Merge {
		// The project is no longer a git checkout: there is nothing of git's
		// to remove, and a folder git does not know is not ours to delete.
		return nil
	}
	registered := err == nil
	_, statErr := os.Stat(w.Path)
	present := statErr == nil
	if present && registered && !force && how != Merge {
		dirty, err := IsDirty(ctx, pw)
		if err != nil {
			return err
		}
		if dirty {
			return &DirtyError{Path: w.Path}
		}
	}
	if how == Merge {
		if _, err := MergeIntoBase(ctx, w, msg); err != nil {
			return err
		}
	}
	if pw.RepoGitDir == "" {
		return nil
	}
	rg := pw.repoGit()
	if present && registered {
		// git checks that the worktree's .git file leads back to its
		// registration before it removes it: the agent may have rewritten
		// it. It is put back as git wrote it (the folder goes anyway).
		if err := restoreGitFile(pw); err != nil {
			return fmt.Errorf("remove the worktree: %w", err)
		}
		if _, err := rg.run(ctx, "worktree", "remove", "--force", "--", w.Path); err != nil {
			return fmt.Errorf("remove the worktree: %w", err)
		}
	}
	// Not a worktree of Repo (any more): the folder is not git's to remove,
	// and not ours either.
	if _, err := rg.run(ctx, "worktree", "prune"); err != nil {
		return err
	}
	if how == Keep || !rg.branchExists(ctx, w.Branch) {
		return nil
	}
	flag := "-D" // discard: the branch goes, merged or not
	if how == Merge {
		flag = "-d" // merged: git agrees it is
	}
	if _, err := rg.run(ctx, "branch", flag, "--", w.Branch); err != nil {
		return fmt.Errorf("delete branch %s: %w", w.Branch, err)
	}
	return nil
}

// restoreGitFile makes the worktree's .git a file that names its registered
// git dir again, whatever the agent made of it (a file naming another git
// dir, a folder, a symlink). w is pinned.
func restoreGitFile(w Workspace) error {
	dot := filepath.Join(w.Path, ".git")
	want := "gitdir: " + w.GitDir + "\n"
	if got, err := readSmallFile(dot, 64<<10); err == nil && got == want {
		return nil
	}
	if err := os.RemoveAll(dot); err != nil {
		return err
	}
	return os.WriteFile(dot, []byte(want), 0o644)
}
