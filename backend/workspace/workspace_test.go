package workspace

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gitEnv makes git in tests independent of the machine's configuration:
// a home of its own whose global config gives the identity (the engine's
// git drops GIT_* variables, so the identity must be in a file).
func gitEnv(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	home := t.TempDir()
	for k, v := range map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM": "1"} {
		t.Setenv(k, v)
	}
	write(t, filepath.Join(home, ".gitconfig"), "[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n")
	return home
}

// run runs git in dir, as the user would (not hardened), and fails the
// test when it fails.
func run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = userEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// userEnv is the environment without the GIT_* variables an attack test
// sets for the engine (the test's own git is the user's, not the engine's).
func userEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "GIT_CONFIG_NOSYSTEM=") {
			env = append(env, kv)
		}
	}
	return env
}

// branchExists reports whether the repository at dir has the branch.
func branchExists(t testing.TB, dir, name string) bool {
	t.Helper()
	cmd := exec.Command("git", "rev-parse", "--verify", "--quiet", "refs/heads/"+name)
	cmd.Dir, cmd.Env = dir, userEnv()
	return cmd.Run() == nil
}

// merging reports whether a merge is under way in the checkout at dir.
func merging(t testing.TB, dir string) bool {
	t.Helper()
	cmd := exec.Command("git", "rev-parse", "--verify", "--quiet", "MERGE_HEAD")
	cmd.Dir, cmd.Env = dir, userEnv()
	return cmd.Run() == nil
}

func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newRepo makes a repository on branch main with files committed.
func newRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	gitEnv(t)
	dir := filepath.Join(t.TempDir(), "project")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "init", "--quiet", "-b", "main")
	for name, text := range files {
		write(t, filepath.Join(dir, name), text)
	}
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "--quiet", "-m", "initial")
	return dir
}

func commitAll(t testing.TB, dir, msg string) {
	t.Helper()
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "--quiet", "-m", msg)
}

func create(t testing.TB, repo, agent string) Workspace {
	t.Helper()
	w, err := Create(context.Background(), Options{Project: repo, Dir: filepath.Join(filepath.Dir(repo), "wt", agent), AgentID: agent})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestCreateMakesBranchFromCurrentBranch(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "one\n"})
	w := create(t, repo, "alpha")
	if w.Branch != "shepherd/alpha" || w.Base != "main" || w.BaseCommit != run(t, repo, "rev-parse", "main") {
		t.Fatalf("workspace = %+v", w)
	}
	if got := run(t, w.Path, "symbolic-ref", "--short", "HEAD"); got != "shepherd/alpha" {
		t.Fatalf("worktree is on %q", got)
	}
	if read(t, filepath.Join(w.Path, "a.txt")) != "one\n" {
		t.Fatal("worktree lacks the base's files")
	}
	st, err := StatusOf(context.Background(), w)
	if err != nil || st.Ahead != 0 || st.Behind != 0 || st.Dirty || st.Problem != "" {
		t.Fatalf("status = %+v, %v", st, err)
	}
	// A second agent of the same id is refused: its branch exists.
	_, err = Create(context.Background(), Options{Project: repo, Dir: filepath.Join(t.TempDir(), "x"), AgentID: "alpha"})
	if err == nil || !strings.Contains(err.Error(), "shepherd/alpha already exists") {
		t.Fatalf("second create: %v", err)
	}
}

func TestCreateFromChosenBaseAndBadBase(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "one\n"})
	run(t, repo, "checkout", "--quiet", "-b", "feature")
	write(t, filepath.Join(repo, "f.txt"), "feature\n")
	commitAll(t, repo, "feature")
	run(t, repo, "checkout", "--quiet", "main")
	w, err := Create(context.Background(), Options{Project: repo, Dir: filepath.Join(t.TempDir(), "w"), AgentID: "b", Base: "feature"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Base != "feature" || read(t, filepath.Join(w.Path, "f.txt")) != "feature\n" {
		t.Fatalf("worktree not from feature: %+v", w)
	}
	_, err = Create(context.Background(), Options{Project: repo, Dir: filepath.Join(t.TempDir(), "w"), AgentID: "c", Base: "nope"})
	if err == nil || !strings.Contains(err.Error(), `base "nope"`) {
		t.Fatalf("bad base: %v", err)
	}
	if branchExists(t, repo, "shepherd/c") {
		t.Fatal("a refused create left its branch")
	}
	_, err = Create(context.Background(), Options{Project: t.TempDir(), Dir: filepath.Join(t.TempDir(), "w"), AgentID: "d"})
	if !errors.Is(err, ErrNotRepo) {
		t.Fatalf("not a repo: %v", err)
	}
}

func TestTwoAgentsEditSameFileBothKept(t *testing.T) {
	repo := newRepo(t, map[string]string{"shared.txt": "base\n"})
	a, b := create(t, repo, "a"), create(t, repo, "b")
	write(t, filepath.Join(a.Path, "shared.txt"), "from a\n")
	commitAll(t, a.Path, "a edits")
	write(t, filepath.Join(b.Path, "shared.txt"), "from b\n")
	commitAll(t, b.Path, "b edits")
	// Neither sees the other's edit, and the main checkout has neither.
	if read(t, filepath.Join(a.Path, "shared.txt")) != "from a\n" || read(t, filepath.Join(b.Path, "shared.txt")) != "from b\n" ||
		read(t, filepath.Join(repo, "shared.txt")) != "base\n" {
		t.Fatal("worktrees share a file")
	}
	for _, w := range []Workspace{a, b} {
		st, err := StatusOf(context.Background(), w)
		if err != nil || st.Ahead != 1 || st.Behind != 0 || st.Dirty {
			t.Fatalf("%s: status %+v, %v", w.Branch, st, err)
		}
		if err := End(context.Background(), w, Keep, false, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(w.Path); !os.IsNotExist(err) {
			t.Fatalf("%s: worktree folder still there (%v)", w.Path, err)
		}
	}
	if got := run(t, repo, "show", "shepherd/a:shared.txt"); got != "from a" {
		t.Fatalf("branch a: %q", got)
	}
	if got := run(t, repo, "show", "shepherd/b:shared.txt"); got != "from b" {
		t.Fatalf("branch b: %q", got)
	}
	if got := run(t, repo, "worktree", "list", "--porcelain"); strings.Count(got, "worktree ") != 1 {
		t.Fatalf("worktrees left:\n%s", got)
	}
}

func TestMergeFastForward(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "one\n"})
	w := create(t, repo, "ff")
	write(t, filepath.Join(w.Path, "a.txt"), "two\n")
	commitAll(t, w.Path, "edit")
	tip := run(t, w.Path, "rev-parse", "HEAD")
	if err := End(context.Background(), w, Merge, false, ""); err != nil {
		t.Fatal(err)
	}
	if got := run(t, repo, "rev-parse", "main"); got != tip {
		t.Fatalf("main = %s, want the branch's tip %s (fast-forward)", got, tip)
	}
	if read(t, filepath.Join(repo, "a.txt")) != "two\n" {
		t.Fatal("main checkout not updated")
	}
	if branchExists(t, repo, "shepherd/ff") {
		t.Fatal("merged branch kept")
	}
}

func TestMergeCommitWhenBaseMoved(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "one\n", "b.txt": "b\n"})
	w := create(t, repo, "mc")
	write(t, filepath.Join(w.Path, "a.txt"), "agent\n")
	commitAll(t, w.Path, "agent edit")
	write(t, filepath.Join(repo, "b.txt"), "user\n")
	commitAll(t, repo, "user edit")
	if _, p, warn := Verify(context.Background(), w); p != "" || !strings.Contains(warn, "base main moved") {
		t.Fatalf("verify = %q, %q", p, warn)
	}
	st, _ := StatusOf(context.Background(), w)
	if st.Ahead != 1 || st.Behind != 1 {
		t.Fatalf("status %+v", st)
	}
	if err := End(context.Background(), w, Merge, false, ""); err != nil {
		t.Fatal(err)
	}
	if parents := strings.Fields(run(t, repo, "rev-list", "--parents", "-n1", "main")); len(parents) != 3 {
		t.Fatalf("main's tip is not a merge commit: %v", parents)
	}
	if read(t, filepath.Join(repo, "a.txt")) != "agent\n" || read(t, filepath.Join(repo, "b.txt")) != "user\n" {
		t.Fatal("merge lost a side")
	}
}

func TestMergeConflictAbortsAndKeepsEverything(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "one\n"})
	w := create(t, repo, "cf")
	write(t, filepath.Join(w.Path, "a.txt"), "agent\n")
	commitAll(t, w.Path, "agent edit")
	write(t, filepath.Join(repo, "a.txt"), "user\n")
	commitAll(t, repo, "user edit")
	mainBefore := run(t, repo, "rev-parse", "main")
	err := End(context.Background(), w, Merge, false, "")
	var ce *ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, ErrConflict) || !slices.Equal(ce.Files, []string{"a.txt"}) {
		t.Fatalf("merge: %v", err)
	}
	if merging(t, repo) {
		t.Fatal("merge left under way")
	}
	if run(t, repo, "rev-parse", "main") != mainBefore || read(t, filepath.Join(repo, "a.txt")) != "user\n" {
		t.Fatal("main changed by a conflicted merge")
	}
	if run(t, repo, "status", "--porcelain") != "" {
		t.Fatal("main checkout left dirty")
	}
	if read(t, filepath.Join(w.Path, "a.txt")) != "agent\n" || !branchExists(t, repo, w.Branch) {
		t.Fatal("worktree or branch lost")
	}
}

func TestMergeNeedsBaseCheckedOut(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "one\n"})
	w := create(t, repo, "m")
	write(t, filepath.Join(w.Path, "a.txt"), "x\n")
	commitAll(t, w.Path, "x")
	run(t, repo, "checkout", "--quiet", "-b", "other")
	err := End(context.Background(), w, Merge, false, "")
	if err == nil || !strings.Contains(err.Error(), "is on branch other; check out main there first") {
		t.Fatalf("merge: %v", err)
	}
	if _, err := os.Stat(w.Path); err != nil {
		t.Fatal("worktree removed by a refused merge")
	}
}

func TestDirtyDiscardAsks(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "one\n"})
	w := create(t, repo, "d")
	write(t, filepath.Join(w.Path, "new.txt"), "unsaved\n")
	// A merge takes them (TestMergeCommitsUncommittedWork); keep and
	// discard would lose them.
	for _, how := range []string{Discard, Keep} {
		err := End(context.Background(), w, how, false, "")
		var de *DirtyError
		if !errors.As(err, &de) || !errors.Is(err, ErrDirty) {
			t.Fatalf("%s of a dirty worktree: %v", how, err)
		}
		if read(t, filepath.Join(w.Path, "new.txt")) != "unsaved\n" {
			t.Fatalf("%s lost the change", how)
		}
	}
	if err := End(context.Background(), w, Discard, true, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.Path); !os.IsNotExist(err) {
		t.Fatal("forced discard left the folder")
	}
	if branchExists(t, repo, w.Branch) {
		t.Fatal("discard kept the branch")
	}
}

func TestVanishedWorktreeAndBranch(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "one\n"})
	w := create(t, repo, "v")
	if err := os.RemoveAll(w.Path); err != nil {
		t.Fatal(err)
	}
	_, p, _ := Verify(context.Background(), w)
	if !strings.Contains(p, "worktree folder "+w.Path+" vanished") {
		t.Fatalf("problem = %q", p)
	}
	if _, err := os.Stat(w.Path); !os.IsNotExist(err) {
		t.Fatal("verify made the worktree again")
	}
	st, err := StatusOf(context.Background(), w)
	if err != nil || st.Problem == "" {
		t.Fatalf("status %+v, %v", st, err)
	}
	if _, err := DiffOf(context.Background(), w); !errors.Is(err, ErrVanished) {
		t.Fatalf("diff: %v", err)
	}
	// The branch too.
	run(t, repo, "worktree", "prune")
	run(t, repo, "branch", "-D", w.Branch)
	_, p, _ = Verify(context.Background(), w)
	if !strings.Contains(p, "branch shepherd/v vanished") {
		t.Fatalf("problem = %q", p)
	}
	// Removing what is left works, and makes nothing.
	if err := End(context.Background(), w, Discard, false, ""); err != nil {
		t.Fatal(err)
	}
	if branchExists(t, repo, w.Branch) {
		t.Fatal("branch made again")
	}
}

func TestWorktreeIncludeCopied(t *testing.T) {
	repo := newRepo(t, map[string]string{".gitignore": ".env\n*.local\nnode_modules/\n", ".worktreeinclude": ".env\nconfig/*.local\n!config/skip.local\n", "a.txt": "a\n"})
	write(t, filepath.Join(repo, ".env"), "SECRET=1\n")
	write(t, filepath.Join(repo, "config", "db.local"), "db\n")
	write(t, filepath.Join(repo, "config", "skip.local"), "skip\n")
	write(t, filepath.Join(repo, "node_modules", "x", "index.js"), "x\n")
	w := create(t, repo, "inc")
	if read(t, filepath.Join(w.Path, ".env")) != "SECRET=1\n" || read(t, filepath.Join(w.Path, "config", "db.local")) != "db\n" {
		t.Fatal("included files not copied")
	}
	for _, f := range []string{"config/skip.local", "node_modules/x/index.js"} {
		if _, err := os.Stat(filepath.Join(w.Path, f)); !os.IsNotExist(err) {
			t.Fatalf("%s copied though not included", f)
		}
	}
}

func TestSetupOutputInLog(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	var log bytes.Buffer
	w, err := Create(context.Background(), Options{Project: repo, Dir: filepath.Join(t.TempDir(), "s"), AgentID: "s",
		Setup: "echo setting up in $(basename $PWD); echo oops >&2; touch made-by-setup", Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[shepherd] worktree setup: echo", "setting up in s\n", "oops\n", "[shepherd] worktree setup done"} {
		if !strings.Contains(log.String(), want) {
			t.Fatalf("log lacks %q:\n%s", want, log.String())
		}
	}
	if _, err := os.Stat(filepath.Join(w.Path, "made-by-setup")); err != nil {
		t.Fatal("setup did not run in the worktree")
	}
	log.Reset()
	_, err = Create(context.Background(), Options{Project: repo, Dir: filepath.Join(t.TempDir(), "f"), AgentID: "f", Setup: "echo failing; exit 3", Log: &log})
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(log.String(), "failing\n[shepherd] worktree setup failed") {
		t.Fatalf("failed setup: %v\n%s", err, log.String())
	}
}

func TestDiffOfWorktree(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "1\n2\n3\n", "gone.txt": "bye\n", "old.txt": "same content here\nline two\nline three\n"})
	w := create(t, repo, "df")
	write(t, filepath.Join(w.Path, "a.txt"), "1\ntwo\n3\n4\n")
	os.Remove(filepath.Join(w.Path, "gone.txt"))
	run(t, w.Path, "mv", "old.txt", "new.txt")
	commitAll(t, w.Path, "edits")
	write(t, filepath.Join(w.Path, "a.txt"), "1\ntwo\n3\n4\n5\n") // uncommitted on top
	write(t, filepath.Join(w.Path, "fresh.txt"), "x\ny")          // untracked
	// The base moving does not show as the agent's removals.
	write(t, filepath.Join(repo, "base-only.txt"), "b\n")
	commitAll(t, repo, "base moves")

	d, err := DiffOf(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]FileDiff{}
	for _, f := range d.Files {
		got[f.Path] = f
	}
	if len(got) != 4 {
		t.Fatalf("files = %+v", d.Files)
	}
	a := got["a.txt"]
	if a.Status != "modified" || a.Added != 3 || a.Deleted != 1 || len(a.Hunks) != 1 {
		t.Fatalf("a.txt = %+v", a)
	}
	if g := got["gone.txt"]; g.Status != "deleted" || g.Deleted != 1 {
		t.Fatalf("gone.txt = %+v", g)
	}
	if r := got["new.txt"]; r.Status != "renamed" || r.OldPath != "old.txt" {
		t.Fatalf("new.txt = %+v", r)
	}
	f := got["fresh.txt"]
	if f.Status != "untracked" || f.Added != 2 || len(f.Hunks) != 1 || f.Hunks[0].Lines[2].Op != "\\" {
		t.Fatalf("fresh.txt = %+v", f)
	}
	if d.Added != 5 || d.Deleted != 2 {
		t.Fatalf("totals +%d -%d", d.Added, d.Deleted)
	}
}
