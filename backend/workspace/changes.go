package workspace

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
)

// What a merge commits first: the worktree's uncommitted changes, as the
// user, with a message of theirs or the default one (merge.go).

// Change is one uncommitted change of a worktree, as git status lists it.
type Change struct {
	Path string `json:"path"`
	// Status: added, modified, deleted, typechange, untracked or conflicted.
	Status string `json:"status"`
}

// statusWords names git status's letters.
var statusWords = map[byte]string{'M': "modified", 'A': "added", 'D': "deleted", 'T': "typechange", 'R': "renamed", 'C': "copied"}

// parseStatus reads `git status --porcelain=v1 -z --no-renames`: per entry
// "XY path" NUL.
func parseStatus(b []byte) ([]Change, error) {
	var out []Change
	for _, e := range splitZ(b) {
		if len(e) < 4 || e[2] != ' ' {
			return nil, fmt.Errorf("git status: %q is not \"XY path\"", e)
		}
		x, y, path := e[0], e[1], e[3:]
		c := Change{Path: path}
		switch {
		case x == '?' && y == '?':
			c.Status = "untracked"
		case x == '!' && y == '!':
			continue // ignored: never asked for
		case x == 'U' || y == 'U' || x == 'A' && y == 'A' || x == 'D' && y == 'D':
			c.Status = "conflicted"
		case y != ' ' && statusWords[y] != "":
			c.Status = statusWords[y]
		case statusWords[x] != "":
			c.Status = statusWords[x]
		default:
			return nil, fmt.Errorf("git status: unknown status %q for %s", e[:2], path)
		}
		out = append(out, c)
	}
	return out, nil
}

// changes lists the work tree's uncommitted changes; untracked is git's
// --untracked-files ("normal": an untracked folder is one entry; "all").
func (r *repo) changes(ctx context.Context, untracked string) ([]Change, error) {
	out, err := r.run(ctx, "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files="+untracked, "--ignore-submodules=all")
	if err != nil {
		return nil, err
	}
	return parseStatus(out)
}

// conflicted is the paths of the changes git holds unmerged.
func conflicted(changes []Change) []string {
	var out []string
	for _, c := range changes {
		if c.Status == "conflicted" {
			out = append(out, c.Path)
		}
	}
	return out
}

// unresolved is the files of files that still hold a conflict marker line
// (read as agent files: no symlink followed, nothing but a regular file
// read). A file gone or a symlink is resolved.
func unresolved(root string, files []string) []string {
	var out []string
	for _, f := range files {
		af, err := readAgentFile(root, f, 64<<20)
		if err != nil || af.kind != kindRegular {
			continue
		}
		if hasMarkers(af.data) {
			out = append(out, f)
		}
	}
	return out
}

// hasMarkers reports whether text has a line git's conflict markers begin.
func hasMarkers(text []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), len(text)+1)
	for sc.Scan() {
		l := sc.Bytes()
		if bytes.HasPrefix(l, []byte("<<<<<<< ")) || bytes.HasPrefix(l, []byte(">>>>>>> ")) ||
			bytes.Equal(l, []byte("<<<<<<<")) || bytes.Equal(l, []byte(">>>>>>>")) {
			return true
		}
	}
	return false
}

// identityError is git without a name or email to commit with.
type identityError struct{ said string }

func (e *identityError) Error() string {
	return fmt.Sprintf("git has no name and email to commit with (%s): set yours with "+
		"`git config --global user.name \"Your Name\"` and `git config --global user.email you@example.com`, then merge again", e.said)
}

func (e *identityError) Unwrap() error { return ErrNoIdentity }

// identity is who git commits as here ("Name <email>"), or an
// identityError saying how to set one.
func (r *repo) identity(ctx context.Context) (string, error) {
	var who string
	for _, v := range []string{"GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"} {
		s, err := r.line(ctx, "var", v)
		if err != nil {
			said := err.Error()
			var ge *gitError
			if errors.As(err, &ge) && strings.TrimSpace(ge.stderr) != "" {
				lines := strings.Split(strings.TrimSpace(ge.stderr), "\n")
				said = strings.TrimSpace(lines[len(lines)-1])
			}
			return "", &identityError{said: said}
		}
		if who == "" {
			// "Name <email> 1700000000 +0000": the date is not who.
			if i := strings.LastIndexByte(s, '>'); i >= 0 {
				s = s[:i+1]
			}
			who = s
		}
	}
	return who, nil
}

// UnresolvedError is a merge of the base under way in the worktree whose
// files still hold conflict markers.
type UnresolvedError struct {
	Path  string   `json:"path"`
	Files []string `json:"files"`
}

func (e *UnresolvedError) Error() string {
	return fmt.Sprintf("the conflicts in %s are not resolved yet (conflict markers are still in them): resolve them in %s, or ask the agent again",
		strings.Join(e.Files, ", "), e.Path)
}

func (e *UnresolvedError) Unwrap() error { return ErrUnresolved }

// agentOf is the agent a Shepherd branch belongs to.
func agentOf(branch string) string { return strings.TrimPrefix(branch, BranchPrefix) }

// DefaultMessage is the commit message of w's uncommitted changes (or of
// the merge of the base the agent resolved), before the user edits it.
func DefaultMessage(w Workspace, changes []Change, merging bool) string {
	var b strings.Builder
	if merging {
		fmt.Fprintf(&b, "Merge branch '%s' into %s\n\nConflicts resolved by agent %s.\n", w.Base, w.Branch, agentOf(w.Branch))
		return b.String()
	}
	fmt.Fprintf(&b, "Work of agent %s\n\nCommitted by Shepherd before merging %s into %s:\n", agentOf(w.Branch), w.Branch, w.Base)
	for i, c := range changes {
		if i == 20 {
			fmt.Fprintf(&b, "  … and %d more\n", len(changes)-i)
			break
		}
		st := c.Status
		if st == "untracked" {
			st = "new"
		}
		fmt.Fprintf(&b, "  %s: %s\n", st, c.Path)
	}
	return b.String()
}

// commitWork commits w's uncommitted work on its branch (`git add --all`,
// then `git commit`), a merge of the base under way included; msg empty:
// DefaultMessage. It returns the commit, "" when there was nothing to
// commit. w is pinned.
func commitWork(ctx context.Context, w Workspace, msg string) (string, error) {
	tg := w.treeGit()
	changes, err := tg.changes(ctx, "all")
	if err != nil {
		return "", err
	}
	merging := tg.merging(ctx)
	if len(changes) == 0 && !merging {
		return "", nil
	}
	if left := unresolved(w.Path, conflicted(changes)); len(left) > 0 {
		return "", &UnresolvedError{Path: w.Path, Files: left}
	}
	if _, err := tg.identity(ctx); err != nil {
		return "", err
	}
	if strings.TrimSpace(msg) == "" {
		msg = DefaultMessage(w, changes, merging)
	}
	if _, err := tg.run(ctx, "add", "--all", "--", "."); err != nil {
		return "", fmt.Errorf("stage the uncommitted work: %w", err)
	}
	if _, err := tg.run(ctx, "commit", "--quiet", "--no-verify", "-m", msg); err != nil {
		return "", fmt.Errorf("commit the uncommitted work: %w", err)
	}
	return tg.line(ctx, "rev-parse", "HEAD")
}

// isAncestor reports whether commit a is an ancestor of b (or b itself).
func (r *repo) isAncestor(ctx context.Context, a, b string) (bool, error) {
	_, err := r.run(ctx, "merge-base", "--is-ancestor", a, b)
	if err == nil {
		return true, nil
	}
	if exitCode(err) == 1 {
		return false, nil
	}
	return false, err
}
