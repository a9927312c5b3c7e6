package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A merge takes what the Diff shows: edits, deletions and untracked files
// (.gitignore respected) are committed first, with the message given, as
// the user's own identity, then merged.
func TestMergeCommitsUncommittedWork(t *testing.T) {
	repo := newRepo(t, map[string]string{".gitignore": "build/\n", "a.txt": "a\n", "b.txt": "b\n"})
	w := create(t, repo, "wip")
	write(t, filepath.Join(w.Path, "a.txt"), "A\n")
	os.Remove(filepath.Join(w.Path, "b.txt"))
	write(t, filepath.Join(w.Path, "notes.md"), "draft\n")
	write(t, filepath.Join(w.Path, "dir", "x.txt"), "x\n")
	write(t, filepath.Join(w.Path, "build", "out"), "ignored\n")
	ctx := context.Background()
	plan, err := PlanMerge(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{{"a.txt", "modified"}, {"b.txt", "deleted"}, {"dir/x.txt", "untracked"}, {"notes.md", "untracked"}}
	if d := cmp.Diff(want, plan.Uncommitted); d != "" || plan.Identity != "Test <test@example.com>" || plan.Blocked != "" || plan.UpToDate {
		t.Fatalf("plan %+v (-want +got uncommitted)\n%s", plan, d)
	}
	if !strings.HasPrefix(plan.Message, "Work of agent wip\n") || !strings.Contains(plan.Message, "  new: notes.md\n") {
		t.Fatalf("default message %q", plan.Message)
	}
	res, err := MergeIntoBase(ctx, w, "Finish the parser\n\nBy the agent.")
	if err != nil || !res.Merged || !res.FastForward || res.Committed == "" || res.Head != res.Committed {
		t.Fatalf("merge %+v, %v", res, err)
	}
	if got := run(t, repo, "log", "-1", "--format=%B%an <%ae>"); got != "Finish the parser\n\nBy the agent.\nTest <test@example.com>" {
		t.Fatalf("commit %q", got)
	}
	if read(t, filepath.Join(repo, "a.txt")) != "A\n" || read(t, filepath.Join(repo, "notes.md")) != "draft\n" || read(t, filepath.Join(repo, "dir", "x.txt")) != "x\n" {
		t.Fatal("the main checkout lacks the work")
	}
	if _, err := os.Stat(filepath.Join(repo, "b.txt")); !os.IsNotExist(err) {
		t.Fatal("the deletion was not merged")
	}
	if got := run(t, repo, "ls-tree", "-r", "--name-only", "main"); strings.Contains(got, "build/") {
		t.Fatalf("an ignored file was committed: %s", got)
	}
	// Merged again: nothing to do.
	if res, err := MergeIntoBase(ctx, w, ""); err != nil || !res.UpToDate || res.Committed != "" {
		t.Fatalf("again: %+v, %v", res, err)
	}
	if plan, _ := PlanMerge(ctx, w); !plan.UpToDate {
		t.Fatalf("plan after: %+v", plan)
	}
}

// git without an identity: a clear error saying how to set one, and
// nothing done.
func TestMergeWithoutIdentity(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := create(t, repo, "anon")
	write(t, filepath.Join(w.Path, "a.txt"), "b\n")
	tip := run(t, repo, "rev-parse", "shepherd/anon")
	// useConfigOnly: no identity made up from the host's name either.
	write(t, filepath.Join(os.Getenv("HOME"), ".gitconfig"), "[user]\n\tuseConfigOnly = true\n")
	_, err := MergeIntoBase(context.Background(), w, "")
	if !errors.Is(err, ErrNoIdentity) || !strings.Contains(err.Error(), `git config --global user.name "Your Name"`) {
		t.Fatalf("merge: %v", err)
	}
	if run(t, repo, "rev-parse", "shepherd/anon") != tip || read(t, filepath.Join(w.Path, "a.txt")) != "b\n" {
		t.Fatal("something was done")
	}
	plan, err := PlanMerge(context.Background(), w)
	if err != nil || !strings.Contains(plan.Blocked, "no name and email to commit with") {
		t.Fatalf("plan %+v, %v", plan, err)
	}
}

// A conflict: the work is committed on the branch, the merge aborted,
// the user's checkout as it was — nothing lost.
func TestMergeConflictLosesNothing(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "one\n"})
	w := create(t, repo, "cf")
	write(t, filepath.Join(w.Path, "a.txt"), "agent\n")
	write(t, filepath.Join(w.Path, "extra.txt"), "more\n")
	write(t, filepath.Join(repo, "a.txt"), "user\n")
	commitAll(t, repo, "user edit")
	mainBefore := run(t, repo, "rev-parse", "main")
	res, err := MergeIntoBase(context.Background(), w, "")
	var ce *ConflictError
	if !errors.As(err, &ce) || !slices.Equal(ce.Files, []string{"a.txt"}) || ce.Committed == "" || res.Conflict != ce || res.Merged {
		t.Fatalf("merge: %+v, %v", res, err)
	}
	if run(t, repo, "rev-parse", "main") != mainBefore || run(t, repo, "status", "--porcelain") != "" || merging(t, repo) {
		t.Fatal("the main checkout changed")
	}
	if run(t, repo, "rev-parse", "shepherd/cf") != ce.Committed || run(t, repo, "show", "shepherd/cf:extra.txt") != "more" {
		t.Fatal("the work is not committed on the branch")
	}
	if read(t, filepath.Join(w.Path, "a.txt")) != "agent\n" {
		t.Fatal("the worktree lost its work")
	}
}

// Asking the agent: the base is merged into its branch in the worktree and
// the conflicts are left in the files; a merge refuses while markers are
// left, and commits the resolution once they are gone.
func TestStartBaseMergeThenResolution(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "one\n", "b.txt": "b\n"})
	w := create(t, repo, "ask")
	write(t, filepath.Join(w.Path, "a.txt"), "agent\n")
	write(t, filepath.Join(repo, "a.txt"), "user\n")
	write(t, filepath.Join(repo, "b.txt"), "B\n")
	commitAll(t, repo, "user edit")
	ctx := context.Background()
	if _, err := MergeIntoBase(ctx, w, "the agent's edit"); !errors.Is(err, ErrConflict) {
		t.Fatalf("merge: %v", err)
	}
	bm, err := StartBaseMerge(ctx, w, "")
	if err != nil || !slices.Equal(bm.Conflicts, []string{"a.txt"}) || bm.Clean || bm.Committed != "" {
		t.Fatalf("start: %+v, %v", bm, err)
	}
	if got := read(t, filepath.Join(w.Path, "a.txt")); !strings.Contains(got, "<<<<<<< HEAD\nagent\n=======\nuser\n>>>>>>> refs/heads/main\n") {
		t.Fatalf("a.txt = %q", got)
	}
	st, err := StatusOf(ctx, w)
	if err != nil || !st.Merging || !slices.Equal(st.Conflicts, []string{"a.txt"}) {
		t.Fatalf("status %+v, %v", st, err)
	}
	// Asked again: the merge under way is kept.
	if bm, err := StartBaseMerge(ctx, w, ""); err != nil || !bm.Resumed || !slices.Equal(bm.Conflicts, []string{"a.txt"}) {
		t.Fatalf("again: %+v, %v", bm, err)
	}
	if plan, _ := PlanMerge(ctx, w); !strings.Contains(plan.Blocked, "not resolved yet") {
		t.Fatalf("plan %+v", plan)
	}
	mainBefore := run(t, repo, "rev-parse", "main")
	if _, err := MergeIntoBase(ctx, w, ""); !errors.Is(err, ErrUnresolved) {
		t.Fatalf("merge with markers left: %v", err)
	}
	if run(t, repo, "rev-parse", "main") != mainBefore {
		t.Fatal("main moved")
	}
	// The agent resolves (an edit only: it cannot write .git).
	write(t, filepath.Join(w.Path, "a.txt"), "agent and user\n")
	if st, _ := StatusOf(ctx, w); !st.Merging || len(st.Conflicts) != 0 {
		t.Fatalf("status after the resolution %+v", st)
	}
	plan, _ := PlanMerge(ctx, w)
	if plan.Blocked != "" || !strings.HasPrefix(plan.Message, "Merge branch 'main' into shepherd/ask") {
		t.Fatalf("plan %+v", plan)
	}
	res, err := MergeIntoBase(ctx, w, "")
	if err != nil || !res.Merged || !res.FastForward || res.Committed == "" {
		t.Fatalf("merge: %+v, %v", res, err)
	}
	if read(t, filepath.Join(repo, "a.txt")) != "agent and user\n" || read(t, filepath.Join(repo, "b.txt")) != "B\n" {
		t.Fatal("main lacks the resolution")
	}
	if parents := strings.Fields(run(t, repo, "rev-list", "--parents", "-n1", res.Committed)); len(parents) != 3 {
		t.Fatalf("the resolution is not a merge commit: %v", parents)
	}
}

// A base that merges without a conflict is committed at once: nothing to
// ask.
func TestStartBaseMergeClean(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "one\n", "b.txt": "b\n"})
	w := create(t, repo, "clean")
	write(t, filepath.Join(w.Path, "a.txt"), "agent\n")
	write(t, filepath.Join(repo, "b.txt"), "user\n")
	commitAll(t, repo, "user edit")
	bm, err := StartBaseMerge(context.Background(), w, "agent edit")
	if err != nil || !bm.Clean || bm.Committed == "" || len(bm.Conflicts) != 0 {
		t.Fatalf("start: %+v, %v", bm, err)
	}
	if read(t, filepath.Join(w.Path, "b.txt")) != "user\n" || merging(t, w.Path) {
		t.Fatal("the base is not merged and committed")
	}
}

func TestParseStatus(t *testing.T) {
	in := " M a.txt\x00D  b.txt\x00?? new dir/\x00UU c.txt\x00AA d.txt\x00A  e.txt\x00 T f\x00"
	got, err := parseStatus([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{{"a.txt", "modified"}, {"b.txt", "deleted"}, {"new dir/", "untracked"}, {"c.txt", "conflicted"},
		{"d.txt", "conflicted"}, {"e.txt", "added"}, {"f", "typechange"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-want +got)\n%s", d)
	}
	for _, bad := range []string{"M", "XYZ a", " Q a"} {
		if _, err := parseStatus([]byte(bad + "\x00")); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte(" M a.txt\x00?? b\x00UU c\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		changes, err := parseStatus(b)
		if err != nil {
			return
		}
		for _, c := range changes {
			if c.Path == "" || c.Status == "" {
				t.Fatalf("change %+v", c)
			}
		}
	})
}

func TestHasMarkers(t *testing.T) {
	for text, want := range map[string]bool{
		"a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> main\n": true,
		"title\n=======\n": false, // a heading underline is no marker
		">>>>>>> left\n":   true,
		"a <<<<<<< b\n":    false,
	} {
		if got := hasMarkers([]byte(text)); got != want {
			t.Errorf("%q: %v", text, got)
		}
	}
}
