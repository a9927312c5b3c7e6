package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"shepherd/internal/testutil"
	"strings"
	"testing"
	"time"
)

func gitRepo(t *testing.T) string {
	return testutil.GitRepo(t, "repo", map[string]string{"a.txt": "one\n"})
}

func TestWorktreeCLI(t *testing.T) {
	p := isolate(t)
	repo := gitRepo(t)
	serve(t, p)
	ok(t, "add-project", repo, "--name", "repo")

	out := ok(t, "create", "repo", "edit", "--worktree", "--", "sh", "-c", `echo two > a.txt && git commit -qam edit && echo wip > b.txt`)
	if !strings.Contains(out, "on branch shepherd/edit from main") {
		t.Fatalf("create: %q", out)
	}
	// A preset in a git project gets a worktree unless told not to.
	if out := ok(t, "create", "repo", "claude1", "--preset", "claude", "--prompt", "hi"); !strings.Contains(out, "branch shepherd/claude1") {
		t.Fatalf("preset create: %q", out)
	}
	if out := ok(t, "create", "repo", "claude2", "--preset", "claude", "--no-worktree"); strings.Contains(out, "worktree") {
		t.Fatalf("--no-worktree: %q", out)
	}
	fails(t, 2, "--base goes with --worktree", "create", "repo", "x", "--base", "main", "--", "true")

	ok(t, "start", "repo", "edit")
	waitStatus(t, "repo", "edit", "completed")
	out = ok(t, "diff", "repo", "edit", "--patch")
	for _, want := range []string{"edit against main", "2 file(s), +2 -1", "M  a.txt", "?  b.txt", "+two", "-one"} {
		if !strings.Contains(out, want) {
			t.Fatalf("diff lacks %q:\n%s", want, out)
		}
	}
	// The run's end refreshes the worktree's status on the record (soon after).
	want := "shepherd/edit (1 ahead, 0 behind main, uncommitted changes)"
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		out := ok(t, "get", "repo", "edit")
		if strings.Contains(out, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("get never said %q: %q", want, out)
		}
	}
	// b.txt is not committed: keeping or discarding the worktree asks (no
	// terminal here: it fails); a merge takes it, committed first.
	fails(t, 1, "uncommitted changes", "rm", "repo", "edit", "--keep")
	fails(t, 2, "use one of --keep, --merge and --discard", "rm", "repo", "edit", "--merge", "--discard")
	fails(t, 2, "-m goes with --merge", "rm", "repo", "edit", "--keep", "-m", "x")
	ok(t, "rm", "repo", "edit", "--merge", "-m", "the agent's draft")
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "two\n" {
		t.Fatalf("main checkout after merge: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "b.txt")); string(b) != "wip\n" {
		t.Fatalf("the uncommitted b.txt was not merged: %q", b)
	}
	if msg := gitOut(t, repo, "log", "-1", "--format=%s|%an <%ae>"); msg != "the agent's draft|The User <user@example.com>" {
		t.Fatalf("the commit of the uncommitted work: %q", msg)
	}
	ok(t, "rm", "repo", "claude1", "--discard")
	fails(t, 1, "does not run in a worktree", "diff", "repo", "claude2")
}

// A merge from the CLI: what is committed first (--plan), a conflict with
// its two ways out, the agent asked to resolve, and its resolution merged.
func TestMergeAndResolveCLI(t *testing.T) {
	p := isolate(t)
	repo := gitRepo(t)
	serve(t, p)
	ok(t, "add-project", repo, "--name", "repo")
	ok(t, "create", "repo", "fix", "--worktree", "--resume-arg", "-c",
		"--resume-arg", `echo "asked: $1"; echo resolved > a.txt`, "--resume-arg", "sh", "--resume-arg", "{prompt}",
		"--", "sh", "-c", `echo agent > a.txt && echo draft > notes.md`)
	ok(t, "start", "repo", "fix")
	waitStatus(t, "repo", "fix", "completed")
	plan := ok(t, "merge", "repo", "fix", "--plan")
	for _, want := range []string{"Merge shepherd/fix into main", "Committed first, as The User <user@example.com>:", "modified   a.txt",
		"untracked  notes.md", "| Work of agent fix"} {
		if !strings.Contains(plan, want) {
			t.Fatalf("plan lacks %q:\n%s", want, plan)
		}
	}
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("user\n"), 0o644)
	gitOut(t, repo, "commit", "-qam", "the user's edit")
	r := fails(t, 1, "conflicts: not merged (nothing was lost)", "merge", "repo", "fix", "-m", "the agent's work")
	for _, want := range []string{"conflicts in: a.txt", "nothing is lost", "committed on shepherd/fix as",
		"cd " + repo + " && git merge shepherd/fix", "shepherd resolve repo fix"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("conflict output lacks %q:\n%s", want, r.stdout)
		}
	}
	if got := gitOut(t, repo, "show", "main:a.txt"); got != "user" {
		t.Fatalf("main changed: %q", got)
	}
	out := ok(t, "resolve", "repo", "fix")
	if !strings.Contains(out, "Asked fix to resolve the conflicts in a.txt") {
		t.Fatalf("resolve: %q", out)
	}
	waitStatus(t, "repo", "fix", "completed")
	if b, _ := os.ReadFile(record(t, "repo", "fix").LogPath); !strings.Contains(string(b), "asked: Shepherd is merging the base branch main") {
		t.Fatalf("the agent was not given the instruction:\n%s", b)
	}
	out = ok(t, "merge", "repo", "fix")
	if !strings.Contains(out, "Merged fix into its base (fast-forward") {
		t.Fatalf("merge: %q", out)
	}
	if got := gitOut(t, repo, "show", "main:a.txt"); got != "resolved" {
		t.Fatalf("main has %q", got)
	}
	fails(t, 2, "-m does not go with --plan", "merge", "repo", "fix", "--plan", "-m", "x")
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestWorktreeHelpFits80Columns(t *testing.T) {
	for _, c := range []string{"diff", "rm", "merge", "resolve"} {
		for _, line := range strings.Split(ok(t, "help", c), "\n") {
			if len([]rune(line)) > 80 && !strings.Contains(line, "--show-secrets") { // a global flag's, not theirs
				t.Errorf("help %s: line of %d columns: %q", c, len([]rune(line)), line)
			}
		}
	}
}
