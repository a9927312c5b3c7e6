package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
	"shepherd/backend/workspace"
	"shepherd/internal/testutil"
)

// gitTest makes git's answers independent of the machine's configuration
// (the engine and the agents it starts inherit these).
func gitTest(t *testing.T) {
	t.Helper()
	testutil.GitIdentity(t)
	t.Setenv("XDG_CONFIG_HOME", os.Getenv("HOME"))
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return testutil.Git(t, dir, args...)
}

// gitHarness is a harness whose project is a git repository on main with
// shared.txt committed.
func gitHarness(t *testing.T, mods ...func(*Config)) (*harness, string) {
	t.Helper()
	gitTest(t)
	h := newHarness(t, mods...)
	repo := h.project.Path
	gitIn(t, repo, "init", "--quiet", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, "shared.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "--quiet", "-m", "initial")
	return h, repo
}

func worktreeSpec(id, script string) AgentSpec {
	s := withID(id, sh(script))
	s.Workspace = &workspace.Workspace{Worktree: true}
	return s
}

// An agent's edit and commit, as an agent CLI would make them.
const commitScript = `echo "from $0" > shared.txt && git add -A && git commit --quiet -m "edit" && pwd`

func TestWorktreeAgentsEditSameFileBothKept(t *testing.T) {
	h, repo := gitHarness(t)
	var wts []*store.Record
	for _, id := range []string{"alpha", "beta"} {
		s := worktreeSpec(id, commitScript)
		s.Args = append(s.Args, id) // $0
		r := h.create(s)
		w := r.Workspace
		if w == nil || w.Branch != "shepherd/"+id || w.Base != "main" || r.Cwd != w.Path || !strings.HasPrefix(w.Path, h.e.WorktreeRoot()) {
			t.Fatalf("%s: record %+v cwd %s", id, w, r.Cwd)
		}
		if within(w.Path, h.data) {
			t.Fatalf("worktree %s is inside the data folder %s, hidden from sandboxes", w.Path, h.data)
		}
		wts = append(wts, r)
	}
	for _, r := range wts {
		h.start(r.ID)
	}
	for _, r := range wts {
		h.waitStatus(r.ID, lifecycle.Completed)
		h.waitLog(r.ID, r.Workspace.Path+"\n") // it ran in its worktree
		// The run's end refreshes the worktree's status on the record.
		testutil.Eventually(t, r.ID+"'s worktree status", func() bool {
			w := h.get(r.ID).Workspace
			return w.Ahead == 1 && !w.Dirty
		})
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "shared.txt")); string(b) != "base\n" {
		t.Fatalf("the main checkout changed: %q", b)
	}
	for _, r := range wts {
		if err := h.e.Remove(context.Background(), h.project.ID, r.ID, RemoveOptions{Worktree: workspace.Keep}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(r.Workspace.Path); !os.IsNotExist(err) {
			t.Fatalf("%s: worktree folder kept", r.ID)
		}
		if got := gitIn(t, repo, "show", "shepherd/"+r.ID+":shared.txt"); got != "from "+r.ID {
			t.Fatalf("branch of %s has %q", r.ID, got)
		}
	}
	if !strings.Contains(h.events(), `"event":"worktree:keep"`) {
		t.Fatal("no worktree:keep event")
	}
}

func TestWorktreeRemoveMerge(t *testing.T) {
	h, repo := gitHarness(t)
	for _, conflict := range []bool{false, true} {
		id := map[bool]string{false: "clean", true: "clash"}[conflict]
		s := worktreeSpec(id, commitScript)
		s.Args = append(s.Args, id)
		r := h.create(s)
		h.start(id)
		h.waitStatus(id, lifecycle.Completed)
		if conflict {
			os.WriteFile(filepath.Join(repo, "shared.txt"), []byte("user\n"), 0o644)
			gitIn(t, repo, "commit", "--quiet", "-am", "user edit")
		}
		before := gitIn(t, repo, "rev-parse", "main")
		err := h.e.Remove(context.Background(), h.project.ID, id, RemoveOptions{Worktree: workspace.Merge})
		if !conflict {
			if err != nil {
				t.Fatal(err)
			}
			if got := gitIn(t, repo, "show", "main:shared.txt"); got != "from clean" {
				t.Fatalf("main after merge: %q", got)
			}
			if _, err := h.e.GetAgent(h.project.ID, id); err == nil {
				t.Fatal("merged agent not removed")
			}
			continue
		}
		wantKind(t, err, ErrMergeConflict, "conflicts in shared.txt")
		if gitIn(t, repo, "rev-parse", "main") != before || gitIn(t, repo, "status", "--porcelain") != "" {
			t.Fatal("a conflicted merge changed the main checkout")
		}
		if _, err := h.e.GetAgent(h.project.ID, id); err != nil {
			t.Fatalf("agent removed after a conflict: %v", err)
		}
		if b, _ := os.ReadFile(filepath.Join(r.Workspace.Path, "shared.txt")); string(b) != "from clash\n" {
			t.Fatal("worktree lost its work")
		}
	}
}

func TestWorktreeDirtyDiscardAsks(t *testing.T) {
	h, repo := gitHarness(t)
	r := h.create(worktreeSpec("d", `echo unsaved > notes.txt`))
	h.start("d")
	h.waitStatus("d", lifecycle.Completed)
	err := h.e.Remove(context.Background(), h.project.ID, "d", RemoveOptions{Worktree: workspace.Discard})
	wantKind(t, err, ErrWorktreeDirty, "uncommitted changes")
	if _, err := os.Stat(filepath.Join(r.Workspace.Path, "notes.txt")); err != nil {
		t.Fatal("refused discard lost the change")
	}
	if _, err := h.e.GetAgent(h.project.ID, "d"); err != nil {
		t.Fatal("refused discard removed the agent")
	}
	if err := h.e.Remove(context.Background(), h.project.ID, "d", RemoveOptions{Worktree: workspace.Discard, DiscardChanges: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(r.Workspace.Path); !os.IsNotExist(err) {
		t.Fatal("discard kept the folder")
	}
	if out := gitIn(t, repo, "branch", "--list", "shepherd/d"); out != "" {
		t.Fatalf("discard kept the branch: %q", out)
	}
}

func TestWorktreeVanishedAtLoadIsReported(t *testing.T) {
	h, repo := gitHarness(t)
	r := h.create(worktreeSpec("v", "true"))
	h.e.Close()
	if err := os.RemoveAll(r.Workspace.Path); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "worktree", "prune")
	gitIn(t, repo, "branch", "-D", "shepherd/v")
	h.e = h.engine()
	if _, err := h.e.SelectProject(context.Background(), h.project.ID); err != nil {
		t.Fatal(err)
	}
	w := h.get("v").Workspace
	if !strings.Contains(w.Problem, "worktree folder "+r.Workspace.Path+" vanished") || !strings.Contains(w.Problem, "branch shepherd/v vanished") {
		t.Fatalf("problem = %q", w.Problem)
	}
	if h.diskRecord("v").Workspace.Problem != w.Problem {
		t.Fatal("problem not written to the record")
	}
	if _, err := os.Stat(r.Workspace.Path); !os.IsNotExist(err) {
		t.Fatal("the worktree was made again")
	}
	if gitIn(t, repo, "branch", "--list", "shepherd/v") != "" {
		t.Fatal("the branch was made again")
	}
	if !strings.Contains(h.events(), `"event":"worktree:problem"`) {
		t.Fatal("no worktree:problem event")
	}
	// What is left can still be removed.
	if err := h.e.Remove(context.Background(), h.project.ID, "v", RemoveOptions{Worktree: workspace.Discard}); err != nil {
		t.Fatal(err)
	}
}

func TestWorktreeBaseMovedAtLoadIsReported(t *testing.T) {
	h, repo := gitHarness(t)
	h.create(worktreeSpec("m", "true"))
	h.e.Close()
	os.WriteFile(filepath.Join(repo, "other.txt"), []byte("x\n"), 0o644)
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "--quiet", "-m", "base moves")
	h.e = h.engine()
	if _, err := h.e.SelectProject(context.Background(), h.project.ID); err != nil {
		t.Fatal(err)
	}
	w := h.get("m").Workspace
	if w.Problem != "" || !strings.Contains(w.Warning, "base main moved") || w.Behind != 1 {
		t.Fatalf("workspace = %+v", w)
	}
}

func TestWorktreeSetupOutputInLogAndSandboxWrite(t *testing.T) {
	h, _ := gitHarness(t)
	s := DefaultSettings()
	s.WorktreeSetup = "echo setup ran in $(pwd)"
	if _, err := h.e.PutSettings(h.project.ID, s); err != nil {
		t.Fatal(err)
	}
	spec := worktreeSpec("s", "true")
	spec.Permissions = &[]string{}
	r := h.create(spec)
	b, err := os.ReadFile(r.LogPath)
	if err != nil || !strings.Contains(string(b), "setup ran in "+r.Workspace.Path+"\n") {
		t.Fatalf("log: %q, %v", b, err)
	}
	if r.Sandbox == nil || !slices.Contains(r.Sandbox.WriteDirs, r.Workspace.Path) {
		t.Fatalf("sandbox %+v lacks the worktree %s", r.Sandbox, r.Workspace.Path)
	}
	// An edit keeps the worktree as cwd and grant.
	spec.Cwd = ""
	up, err := h.e.UpdateAgent(h.project.ID, spec)
	if err != nil || up.Cwd != r.Workspace.Path || !slices.Contains(up.Sandbox.WriteDirs, r.Workspace.Path) {
		t.Fatalf("update: %+v, %v", up, err)
	}
}

func TestWorktreeCreateRefusedLeavesNothing(t *testing.T) {
	h, repo := gitHarness(t)
	spec := worktreeSpec("bad", "true")
	spec.Workspace.Base = "no-such-branch"
	_, err := h.e.CreateAgent(h.project.ID, spec)
	wantKind(t, err, ErrWorktree, `base "no-such-branch"`)
	if _, err := h.e.GetAgent(h.project.ID, "bad"); err == nil {
		t.Fatal("agent created")
	}
	// A grant the user cannot give undoes the worktree made for it.
	spec = worktreeSpec("bad2", "true")
	spec.Permissions = &[]string{"@write:relative"}
	_, err = h.e.CreateAgent(h.project.ID, spec)
	wantKind(t, err, ErrValidation, "")
	if gitIn(t, repo, "branch", "--list", "shepherd/bad*") != "" {
		t.Fatal("a refused create left a branch")
	}
	if _, err := os.Stat(filepath.Join(h.e.WorktreeRoot(), h.project.ID, "bad2")); !os.IsNotExist(err) {
		t.Fatal("a refused create left its worktree")
	}
	// Not a repository: a clear error.
	h2 := newHarness(t)
	_, err = h2.e.CreateAgent(h2.project.ID, worktreeSpec("x", "true"))
	wantKind(t, err, ErrWorktree, "not a git repository")
}

func TestWorktreeDiffAndRefresh(t *testing.T) {
	h, _ := gitHarness(t)
	r := h.create(worktreeSpec("df", `printf 'base\nmore\n' > shared.txt; echo new > new.txt`))
	h.start("df")
	h.waitStatus("df", lifecycle.Completed)
	d, err := h.e.AgentDiff(context.Background(), h.project.ID, "df")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != 2 || d.Files[0].Path != "shared.txt" || d.Files[0].Added != 1 || d.Files[1].Status != "untracked" {
		t.Fatalf("diff %+v", d.Files)
	}
	v, err := h.e.RefreshWorktree(context.Background(), h.project.ID, "df")
	if err != nil || !v.Status.Dirty || v.Status.Branch != r.Workspace.Branch {
		t.Fatalf("refresh %+v, %v", v, err)
	}
	h.rec.mu.Lock()
	pushed := slices.Contains(h.rec.events, EventWorktree)
	h.rec.mu.Unlock()
	if !pushed {
		t.Fatal("no agent:worktree pushed")
	}
	plain := h.create(withID("plain", sh("true")))
	_, err = h.e.AgentDiff(context.Background(), h.project.ID, plain.ID)
	wantKind(t, err, ErrValidation, "does not run in a worktree")
}
