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
	// GitDir is the worktree's own git dir as git registered it in the
	// repository (<common>/worktrees/<name>), CommonDir the repository's
	// git dir, RepoGitDir the main checkout's (CommonDir but when the project
	// is itself a linked worktree). Every git on the worktree runs with them
	// pinned: the worktree's .git file, which the agent can rewrite, is
	// never read. A record made before they were kept gets them from the
	// repository's registration (Pin).
	GitDir     string `json:"gitDir,omitempty"`
	CommonDir  string `json:"commonDir,omitempty"`
	RepoGitDir string `json:"repoGitDir,omitempty"`
	// Problem is what the check at load found wrong (a worktree or branch
	// that vanished): the worktree is not made again, the user decides.
	Problem string `json:"problem,omitempty"`
	// Warning is what the check found worth knowing (the base moved, the
	// setup command failed).
	Warning string `json:"warning,omitempty"`
	// Ahead, Behind, Dirty, Merging and Conflicts are its status when last
	// looked at (at create, at load, when a run ends, when its HEAD, index,
	// branch or base changed, on refresh); CheckedAt is when.
	Ahead     int        `json:"ahead"`
	Behind    int        `json:"behind"`
	Dirty     bool       `json:"dirty"`
	Merging   bool       `json:"merging,omitempty"`
	Conflicts []string   `json:"conflicts,omitempty"`
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

// repoGit is git on the main checkout, its git dir pinned.
func (w Workspace) repoGit() *repo { return pinned(w.RepoGitDir, w.Repo, w.Repo, w.Path) }

// treeGit is git on the worktree, its git dir pinned to the registered one.
func (w Workspace) treeGit() *repo { return pinned(w.GitDir, w.Path, w.Path, w.Repo) }

// Create makes the worktree: `git worktree add -b shepherd/<agent> <dir>
// <base>`, copies what .worktreeinclude lists, and runs the setup command.
// A failed setup leaves the worktree in place (the error says so); any
// earlier failure leaves nothing behind.
func Create(ctx context.Context, o Options) (Workspace, error) {
	top, err := TopLevel(ctx, o.Project)
	if err != nil {
		return Workspace{}, err
	}
	d := discover(top)
	gitDir, err := d.line(ctx, "rev-parse", "--path-format=absolute", "--git-dir")
	if err != nil {
		return Workspace{}, err
	}
	common, err := d.line(ctx, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return Workspace{}, err
	}
	w := Workspace{Worktree: true, Repo: top, RepoGitDir: gitDir, CommonDir: common}
	rg := w.repoGit()
	base := o.Base
	if base == "" {
		if base, err = rg.currentBranch(ctx); err != nil {
			return Workspace{}, err
		}
		if base == "" {
			base = "HEAD" // detached: its commit
		}
	}
	baseCommit, err := rg.commitOf(ctx, base)
	if err != nil {
		return Workspace{}, fmt.Errorf("base %q is not a branch or commit of %s", base, top)
	}
	if base == "HEAD" {
		base = baseCommit
	}
	branch := BranchFor(o.AgentID)
	if rg.branchExists(ctx, branch) {
		return Workspace{}, fmt.Errorf("branch %s already exists in %s: remove or rename it first", branch, top)
	}
	if _, err := os.Lstat(o.Dir); err == nil {
		return Workspace{}, fmt.Errorf("worktree folder %s already exists", o.Dir)
	}
	if err := os.MkdirAll(filepath.Dir(o.Dir), 0o700); err != nil {
		return Workspace{}, err
	}
	// Parallel checkout (one worker per core): writing the files is most of
	// the time of a large repository's worktree, and it waits on the disk.
	if _, err := rg.run(ctx, "-c", "checkout.workers=0", "worktree", "add", "--quiet", "-b", branch, "--", o.Dir, baseCommit); err != nil {
		return Workspace{}, fmt.Errorf("create the worktree: %w", err)
	}
	w.Base, w.Path, w.Branch, w.BaseCommit = base, o.Dir, branch, baseCommit
	// The folder as git and the agent see it (symlinks resolved).
	if real, err := filepath.EvalSymlinks(o.Dir); err == nil {
		w.Path = real
	}
	if w.GitDir, err = registered(w.CommonDir, w.Path); err != nil {
		_ = forceRemove(ctx, w)
		return Workspace{}, err
	}
	if _, err := CopyIncluded(ctx, w); err != nil {
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
	rg := w.repoGit()
	_, err1 := rg.run(ctx, "worktree", "remove", "--force", "--", w.Path)
	_, err2 := rg.run(ctx, "branch", "-D", "--", w.Branch)
	return errors.Join(err1, err2)
}

// registered finds the git dir the repository (common dir) registered for
// the worktree at path: the folder of <common>/worktrees whose gitdir file
// names path/.git. What the worktree's own .git file says is not asked.
func registered(common, path string) (string, error) {
	want := filepath.Join(path, ".git")
	admin := filepath.Join(common, "worktrees")
	// Git names the folder after the worktree's, with a number when taken.
	try := []string{filepath.Join(admin, filepath.Base(path))}
	if ents, err := os.ReadDir(admin); err == nil {
		for _, e := range ents {
			if e.IsDir() {
				try = append(try, filepath.Join(admin, e.Name()))
			}
		}
	}
	for _, dir := range try {
		if namesWorktree(dir, want) {
			return dir, nil
		}
	}
	return "", fmt.Errorf("%s is no longer a worktree of the repository %s: %w", path, common, ErrNotRegistered)
}

// namesWorktree reports whether the registration dir (a folder of
// <common>/worktrees) is that of the worktree whose .git file is gitFile.
func namesWorktree(dir, gitFile string) bool {
	s, err := readSmallFile(filepath.Join(dir, "gitdir"), 64<<10)
	if err != nil {
		return false
	}
	return samePath(strings.TrimSpace(s), gitFile)
}

// Pin fills what git registered of w (GitDir, CommonDir, RepoGitDir) for a
// record made before they were kept, from the project repository's own
// registration, and checks that the worktree's registration still names
// its folder. ErrNotRegistered when it does not.
func Pin(ctx context.Context, w Workspace) (Workspace, error) {
	if w.RepoGitDir == "" {
		dot := filepath.Join(w.Repo, ".git")
		if fi, err := os.Lstat(dot); err == nil && fi.IsDir() {
			w.RepoGitDir = dot
		} else if s, err := discover(w.Repo).line(ctx, "rev-parse", "--path-format=absolute", "--git-dir"); err == nil {
			w.RepoGitDir = s
		} else {
			return w, fmt.Errorf("the project folder %s is no longer a git checkout: %w", w.Repo, ErrNotRepo)
		}
	}
	if w.CommonDir == "" {
		s, err := pinned(w.RepoGitDir, w.Repo).line(ctx, "rev-parse", "--path-format=absolute", "--git-common-dir")
		if err != nil {
			return w, fmt.Errorf("the project folder %s is no longer a git checkout: %w", w.Repo, ErrNotRepo)
		}
		w.CommonDir = s
	}
	if w.GitDir == "" {
		dir, err := registered(w.CommonDir, w.Path)
		if err != nil {
			return w, err
		}
		w.GitDir = dir
	} else if !namesWorktree(w.GitDir, filepath.Join(w.Path, ".git")) || !inside(w.GitDir, filepath.Join(w.CommonDir, "worktrees")) {
		return w, fmt.Errorf("%s is no longer a worktree of %s: %w", w.Path, w.Repo, ErrNotRegistered)
	}
	return w, nil
}

// IncludeFile is the file (gitignore syntax) that lists what a new
// worktree gets copied from the main checkout: .env files and the like,
// which git does not track.
const IncludeFile = ".worktreeinclude"

// included lists, relative to the main checkout, the untracked files
// .worktreeinclude matches. Git does the matching (`git ls-files --others
// --ignored --exclude-from`), so the patterns mean what they mean in
// .gitignore. The file is read by the engine (no symlink followed, no
// pipe opened) and handed to git as a copy.
func included(ctx context.Context, w Workspace) ([]string, error) {
	f, err := readAgentFile(w.Repo, IncludeFile, 1<<20)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case f.kind != kindRegular:
		return nil, fmt.Errorf("%s is a %s, not a file", IncludeFile, f.kind)
	case f.truncated:
		return nil, fmt.Errorf("%s is larger than 1 MiB", IncludeFile)
	}
	tmp, err := os.CreateTemp("", "shepherd-worktreeinclude-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(f.data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	out, err := w.repoGit().run(ctx, "ls-files", "-z", "--others", "--ignored", "--exclude-from="+tmp.Name())
	if err != nil {
		return nil, err
	}
	return splitZ(out), nil
}

// CopyIncluded copies what .worktreeinclude lists from the main checkout
// into the worktree, keeping modes and symlinks (as links: none is
// followed, on either side); it returns the files copied.
func CopyIncluded(ctx context.Context, w Workspace) ([]string, error) {
	files, err := included(ctx, w)
	if err != nil {
		return nil, err
	}
	var copied []string
	for _, f := range files {
		ok, err := copyAgentFile(w.Repo, w.Path, f)
		if err != nil {
			return nil, fmt.Errorf("copy %s: %w", f, err)
		}
		if ok {
			copied = append(copied, f)
		}
	}
	return copied, nil
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
	// Merging: the base is being merged into the branch in the worktree (the
	// agent was asked to resolve its conflicts); Conflicts, the files that
	// still hold conflict markers.
	Merging   bool     `json:"merging,omitempty"`
	Conflicts []string `json:"conflicts,omitempty"`
	// Problem: the worktree or branch vanished (then the counts are 0).
	Problem string `json:"problem,omitempty"`
}

// baseRef is what the base is now: the base branch when it still exists,
// else the commit the worktree was made from.
func baseRef(ctx context.Context, w Workspace) string {
	if w.Base != "" && w.Base != w.BaseCommit && w.repoGit().branchExists(ctx, w.Base) {
		return "refs/heads/" + w.Base
	}
	return w.BaseCommit
}

// StatusOf reports w's branch, commits ahead and behind its base (`git
// rev-list --left-right --count`), whether it has uncommitted changes, and
// a merge of the base under way.
func StatusOf(ctx context.Context, w Workspace) (Status, error) {
	st := Status{Branch: w.Branch, Base: w.Base}
	w, m := open(ctx, w)
	if m.text != "" {
		st.Problem = m.text
		return st, nil
	}
	out, err := w.repoGit().line(ctx, "rev-list", "--left-right", "--count", baseRef(ctx, w)+"...refs/heads/"+w.Branch)
	if err != nil {
		return st, err
	}
	if st.Behind, st.Ahead, err = parseCounts(out); err != nil {
		return st, err
	}
	tg := w.treeGit()
	changes, err := tg.changes(ctx, "normal")
	if err != nil {
		return st, err
	}
	st.Dirty = len(changes) > 0
	if st.Merging = tg.merging(ctx); st.Merging {
		st.Conflicts = unresolved(w.Path, conflicted(changes))
	}
	return st, nil
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

// IsDirty reports whether w's worktree has changes not committed,
// untracked files included.
func IsDirty(ctx context.Context, w Workspace) (bool, error) {
	w, err := Pin(ctx, w)
	if err != nil {
		return false, err
	}
	changes, err := w.treeGit().changes(ctx, "normal")
	return len(changes) > 0, err
}

// missing is what open found gone of a worktree.
type missing struct {
	repo, folder, registration, branch bool
	text                               string // in words; "" when nothing is
}

// treeGone reports whether the worktree itself is unusable, while the
// repository and the branch are there (a merge of the branch still works).
func (m missing) treeGone() bool { return !m.repo && !m.branch && (m.folder || m.registration) }

// open pins w (Pin) and says what is missing of it: the main checkout, its
// folder, its registration as a worktree of Repo, or its branch.
func open(ctx context.Context, w Workspace) (Workspace, missing) {
	var m missing
	var words []string
	pw, err := Pin(ctx, w)
	if errors.Is(err, ErrNotRepo) {
		m.repo, m.text = true, fmt.Sprintf("the project folder %s is no longer a git checkout", w.Repo)
		return w, m
	}
	if fi, serr := os.Stat(w.Path); serr != nil || !fi.IsDir() {
		m.folder = true
		words = append(words, fmt.Sprintf("worktree folder %s vanished", w.Path))
	} else if err != nil {
		m.registration = true
		words = append(words, fmt.Sprintf("%s is no longer a worktree of %s", w.Path, w.Repo))
	}
	if pw.RepoGitDir != "" && !pw.repoGit().branchExists(ctx, w.Branch) {
		m.branch = true
		words = append(words, fmt.Sprintf("branch %s vanished", w.Branch))
	}
	m.text = strings.Join(words, "; ")
	return pw, m
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
// the worktree was made. Nothing is made again. The workspace it returns has
// what git registered filled in (Pin).
func Verify(ctx context.Context, w Workspace) (pinned Workspace, problem, warning string) {
	pinned, m := open(ctx, w)
	if m.text != "" {
		return pinned, m.text, ""
	}
	if w.Base == "" || w.Base == w.BaseCommit {
		return pinned, "", ""
	}
	now, err := pinned.repoGit().commitOf(ctx, "refs/heads/"+w.Base)
	switch {
	case err != nil:
		return pinned, "", fmt.Sprintf("base branch %s vanished; the diff is against %s, where the worktree started", w.Base, short(w.BaseCommit))
	case now != w.BaseCommit:
		return pinned, "", fmt.Sprintf("base %s moved since the worktree was made (%s, now %s)", w.Base, short(w.BaseCommit), short(now))
	}
	return pinned, "", ""
}

func short(c string) string {
	if len(c) > 10 {
		return c[:10]
	}
	return c
}
