package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Workspace is an agent's worktree as its record keeps it: what the user
// asked for (Worktree, Base) and what Shepherd made (the rest).
type Workspace struct {
	// Worktree runs the agent in a git worktree of its own.
	Worktree bool `json:"worktree"`
	// Base is the branch (or commit) the worktree starts from; empty: the
	// branch checked out in the project when the agent was created.
	Base string `json:"base,omitempty"`
	// Repo is the main checkout's top folder, where a merge goes.
	Repo string `json:"repo,omitempty"`
	// Path is the worktree's folder; Branch, its branch (shepherd/<agent>).
	Path   string `json:"path,omitempty"`
	Branch string `json:"branch,omitempty"`
	// BaseCommit is the commit Base named when the worktree was made.
	BaseCommit string `json:"baseCommit,omitempty"`
	// Problem is what the check at load found wrong (a worktree or branch
	// that vanished): the worktree is not made again, the user decides.
	Problem string `json:"problem,omitempty"`
	// Warning is what the check found worth knowing (the base moved, the
	// setup command failed).
	Warning string `json:"warning,omitempty"`
	// Ahead, Behind and Dirty are its status when last looked at (at
	// create, at load, when a run ends, on refresh); CheckedAt is when.
	Ahead     int        `json:"ahead"`
	Behind    int        `json:"behind"`
	Dirty     bool       `json:"dirty"`
	CheckedAt *time.Time `json:"checkedAt,omitempty"`
}

// Options are what Create needs.
type Options struct {
	Project string // the project's folder, in a git checkout
	Dir     string // where the worktree goes (must not exist)
	AgentID string // names the branch shepherd/<AgentID>
	Base    string // branch or commit; empty: the project's current branch
	// Setup is the project's optional setup command line, run with sh -c in
	// the new worktree; its output goes to Log.
	Setup        string
	SetupTimeout time.Duration // 0: 10 minutes
	Log          io.Writer     // may be nil
}

// Create makes the worktree: `git worktree add -b shepherd/<agent> <dir>
// <base>`, copies what .worktreeinclude lists, and runs the setup command.
// A failed setup leaves the worktree in place (the error says so); any
// earlier failure leaves nothing behind.
func Create(ctx context.Context, o Options) (Workspace, error) {
	repo, err := TopLevel(ctx, o.Project)
	if err != nil {
		return Workspace{}, err
	}
	base := o.Base
	if base == "" {
		if base, err = CurrentBranch(ctx, repo); err != nil {
			return Workspace{}, err
		}
		if base == "" {
			base = "HEAD" // detached: its commit
		}
	}
	baseCommit, err := commitOf(ctx, repo, base)
	if err != nil {
		return Workspace{}, fmt.Errorf("base %q is not a branch or commit of %s", base, repo)
	}
	if base == "HEAD" {
		base = baseCommit
	}
	branch := BranchFor(o.AgentID)
	if branchExists(ctx, repo, branch) {
		return Workspace{}, fmt.Errorf("branch %s already exists in %s: remove or rename it first", branch, repo)
	}
	if _, err := os.Lstat(o.Dir); err == nil {
		return Workspace{}, fmt.Errorf("worktree folder %s already exists", o.Dir)
	}
	if err := os.MkdirAll(filepath.Dir(o.Dir), 0o700); err != nil {
		return Workspace{}, err
	}
	if _, err := git(ctx, repo, "worktree", "add", "--quiet", "-b", branch, "--", o.Dir, baseCommit); err != nil {
		return Workspace{}, fmt.Errorf("create the worktree: %w", err)
	}
	w := Workspace{Worktree: true, Base: base, Repo: repo, Path: o.Dir, Branch: branch, BaseCommit: baseCommit}
	// The folder as git and the agent see it (symlinks resolved).
	if real, err := filepath.EvalSymlinks(o.Dir); err == nil {
		w.Path = real
	}
	if _, err := CopyIncluded(ctx, repo, w.Path); err != nil {
		_ = forceRemove(ctx, w)
		return Workspace{}, fmt.Errorf("copy what .worktreeinclude lists: %w", err)
	}
	if strings.TrimSpace(o.Setup) != "" {
		if err := RunSetup(ctx, w.Path, o.Setup, o.SetupTimeout, o.Log); err != nil {
			return w, err
		}
	}
	return w, nil
}

// forceRemove undoes a Create that failed half-way.
func forceRemove(ctx context.Context, w Workspace) error {
	_, err1 := git(ctx, w.Repo, "worktree", "remove", "--force", "--", w.Path)
	_, err2 := git(ctx, w.Repo, "branch", "-D", "--", w.Branch)
	return errors.Join(err1, err2)
}

// IncludeFile is the file (gitignore syntax) that lists what a new
// worktree gets copied from the main checkout: .env files and the like,
// which git does not track.
const IncludeFile = ".worktreeinclude"

// Included lists, relative to repo, the untracked files .worktreeinclude
// matches. Git does the matching (`git ls-files --others --ignored
// --exclude-from`), so the patterns mean what they mean in .gitignore.
func Included(ctx context.Context, repo string) ([]string, error) {
	inc := filepath.Join(repo, IncludeFile)
	if _, err := os.Stat(inc); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	out, err := git(ctx, repo, "ls-files", "-z", "--others", "--ignored", "--exclude-from="+inc)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

// CopyIncluded copies what .worktreeinclude lists from repo into dst,
// keeping modes and symlinks; it returns the files copied.
func CopyIncluded(ctx context.Context, repo, dst string) ([]string, error) {
	files, err := Included(ctx, repo)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := copyFile(filepath.Join(repo, f), filepath.Join(dst, f)); err != nil {
			return nil, fmt.Errorf("copy %s: %w", f, err)
		}
	}
	return files, nil
}

func copyFile(src, dst string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	if !fi.Mode().IsRegular() {
		return nil // sockets, fifos: nothing to copy
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// RunSetup runs the setup command line with sh -c in dir, its output
// (stdout and stderr) written to log between two marker lines.
func RunSetup(ctx context.Context, dir, command string, timeout time.Duration, log io.Writer) error {
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	if log == nil {
		log = io.Discard
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	fmt.Fprintf(log, "[shepherd] worktree setup: %s\n", command)
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out after %s", timeout)
		}
		fmt.Fprintf(log, "[shepherd] worktree setup failed: %v\n", err)
		return fmt.Errorf("worktree setup command %q failed: %w (its output is in the agent's log)", command, err)
	}
	fmt.Fprintf(log, "[shepherd] worktree setup done\n")
	return nil
}

// Status is a worktree's state now.
type Status struct {
	Branch string `json:"branch"`
	Base   string `json:"base"`
	Ahead  int    `json:"ahead"`  // commits on the branch, not on the base
	Behind int    `json:"behind"` // commits on the base, not on the branch
	Dirty  bool   `json:"dirty"`  // uncommitted changes (untracked files count)
	// Problem: the worktree or branch vanished (then the counts are 0).
	Problem string `json:"problem,omitempty"`
}

// baseRef is what the base is now: the base branch when it still exists,
// else the commit the worktree was made from.
func baseRef(ctx context.Context, w Workspace) string {
	if w.Base != "" && w.Base != w.BaseCommit && branchExists(ctx, w.Repo, w.Base) {
		return "refs/heads/" + w.Base
	}
	return w.BaseCommit
}

// StatusOf reports w's branch, commits ahead and behind its base (`git
// rev-list --left-right --count`), and whether it has uncommitted changes.
func StatusOf(ctx context.Context, w Workspace) (Status, error) {
	st := Status{Branch: w.Branch, Base: w.Base}
	if p := check(ctx, w); p != "" {
		st.Problem = p
		return st, nil
	}
	out, err := gitLine(ctx, w.Repo, "rev-list", "--left-right", "--count", baseRef(ctx, w)+"...refs/heads/"+w.Branch)
	if err != nil {
		return st, err
	}
	if st.Behind, st.Ahead, err = parseCounts(out); err != nil {
		return st, err
	}
	st.Dirty, err = IsDirty(ctx, w.Path)
	return st, err
}

// parseCounts reads rev-list's "<left>\t<right>".
func parseCounts(s string) (left, right int, err error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("git rev-list --count said %q, not two counts", s)
	}
	if left, err = strconv.Atoi(f[0]); err == nil {
		right, err = strconv.Atoi(f[1])
	}
	if err != nil {
		return 0, 0, fmt.Errorf("git rev-list --count said %q: %w", s, err)
	}
	return left, right, nil
}

// IsDirty reports whether the checkout in dir has changes not committed,
// untracked files included.
func IsDirty(ctx context.Context, dir string) (bool, error) {
	out, err := git(ctx, dir, "status", "--porcelain", "-z", "--untracked-files=normal")
	if err != nil {
		return false, err
	}
	return len(out) > 0, nil
}

// check says what is missing of w: its folder, its registration as a
// worktree of Repo, or its branch ("" when nothing is).
func check(ctx context.Context, w Workspace) string {
	if _, err := TopLevel(ctx, w.Repo); err != nil {
		return fmt.Sprintf("the project folder %s is no longer a git checkout", w.Repo)
	}
	var missing []string
	if fi, err := os.Stat(w.Path); err != nil || !fi.IsDir() {
		missing = append(missing, fmt.Sprintf("worktree folder %s vanished", w.Path))
	} else if !listed(ctx, w) {
		missing = append(missing, fmt.Sprintf("%s is no longer a worktree of %s", w.Path, w.Repo))
	}
	if !branchExists(ctx, w.Repo, w.Branch) {
		missing = append(missing, fmt.Sprintf("branch %s vanished", w.Branch))
	}
	return strings.Join(missing, "; ")
}

// listed reports whether git knows w.Path as a worktree of w.Repo.
func listed(ctx context.Context, w Workspace) bool {
	out, err := git(ctx, w.Repo, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return false
	}
	for _, f := range strings.Split(string(out), "\x00") {
		if p, ok := strings.CutPrefix(f, "worktree "); ok && samePath(p, w.Path) {
			return true
		}
	}
	return false
}

func samePath(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// Verify is the check at load: Problem says what vanished (the worktree
// folder, its registration, its branch), Warning that the base moved since
// the worktree was made. Nothing is made again.
func Verify(ctx context.Context, w Workspace) (problem, warning string) {
	if problem = check(ctx, w); problem != "" {
		return problem, ""
	}
	if w.Base == "" || w.Base == w.BaseCommit {
		return "", ""
	}
	now, err := commitOf(ctx, w.Repo, "refs/heads/"+w.Base)
	switch {
	case err != nil:
		return "", fmt.Sprintf("base branch %s vanished; the diff is against %s, where the worktree started", w.Base, short(w.BaseCommit))
	case now != w.BaseCommit:
		return "", fmt.Sprintf("base %s moved since the worktree was made (%s, now %s)", w.Base, short(w.BaseCommit), short(now))
	}
	return "", ""
}

func short(c string) string {
	if len(c) > 10 {
		return c[:10]
	}
	return c
}
