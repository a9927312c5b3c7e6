package supervisor

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/worktrees"
	"shepherd/backend/workspace"
	"shepherd/internal/testutil"
)

// The merge takes what the Diff shows: what the agent left uncommitted is
// committed (as the user, with the message given) and merged; the agent
// stays. A live agent's worktree is not merged under it.
func TestMergeWorktreeTakesUncommittedWork(t *testing.T) {
	h, repo := gitHarness(t)
	h.create(worktreeSpec("wip", `echo "from the agent" > shared.txt && echo draft > notes.md`))
	h.start("wip")
	h.waitStatus("wip", lifecycle.Completed)
	ctx := context.Background()
	plan, err := h.e.WorktreeMergePlan(ctx, h.project.ID, "wip")
	if err != nil || len(plan.Uncommitted) != 2 || plan.Identity != "The User <user@example.com>" || plan.Blocked != "" {
		t.Fatalf("plan %+v, %v", plan, err)
	}
	res, err := h.e.MergeWorktree(ctx, h.project.ID, "wip", "The agent's work")
	if err != nil || !res.Merged || !res.FastForward || res.Committed == "" {
		t.Fatalf("merge %+v, %v", res, err)
	}
	if got := gitIn(t, repo, "log", "-1", "--format=%s|%an"); got != "The agent's work|The User" {
		t.Fatalf("main's tip: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "notes.md")); string(b) != "draft\n" {
		t.Fatal("the untracked file was not merged")
	}
	if _, err := h.e.GetAgent(h.project.ID, "wip"); err != nil {
		t.Fatal("the agent went with the merge")
	}
	for _, ev := range []string{`"event":"worktree:committed"`, `"event":"worktree:merged"`} {
		if !strings.Contains(h.events(), ev) {
			t.Fatalf("no %s event", ev)
		}
	}
	testutil.Eventually(t, "the worktree looked at again", func() bool {
		w := h.get("wip").Workspace
		return !w.Dirty && w.Ahead == 0
	})

	h.create(worktreeSpec("live", "exec sleep 300"))
	h.start("live")
	h.waitStatus("live", lifecycle.Running)
	_, err = h.e.MergeWorktree(ctx, h.project.ID, "live", "")
	wantKind(t, err, ErrIsRunning, "stop it or wait for its run to end")
	if plan, _ := h.e.WorktreeMergePlan(ctx, h.project.ID, "live"); !strings.Contains(plan.Running, "is running") || plan.Blocked != "" {
		t.Fatalf("plan of a live agent: %+v", plan)
	}
	_, err = h.e.AskToResolve(ctx, h.project.ID, "live", "")
	wantKind(t, err, ErrIsRunning, "")
}

// conflictSetup: the agent's uncommitted edit of shared.txt and the user's
// commit of another edit of it; a merge conflicts.
func conflictSetup(t *testing.T, h *harness, repo, id string) workspace.MergeResult {
	t.Helper()
	os.WriteFile(filepath.Join(repo, "shared.txt"), []byte("user\n"), 0o644)
	gitIn(t, repo, "commit", "--quiet", "-am", "the user's edit")
	res, err := h.e.MergeWorktree(context.Background(), h.project.ID, id, "")
	if err != nil || res.Merged || res.Conflict == nil || !slices.Equal(res.Conflict.Files, []string{"shared.txt"}) || res.Committed == "" {
		t.Fatalf("merge: %+v, %v", res, err)
	}
	if gitIn(t, repo, "status", "--porcelain") != "" || gitIn(t, repo, "show", "main:shared.txt") != "user" {
		t.Fatal("the conflict changed the user's checkout")
	}
	return res
}

// Asking the agent: the base is merged into its branch in its worktree
// with the conflicts left in the files, and the agent resumes (through the
// queue) with an instruction naming them; its resolution is committed and
// merged by the next merge.
func TestAskToResolveResumesTheAgentWithTheConflicts(t *testing.T) {
	h, repo := gitHarness(t)
	spec := worktreeSpec("fixer", `echo agent > shared.txt`)
	// Its resume takes the prompt as $1, says it, and resolves what it names.
	spec.ResumeArgs = []string{"-c", `printf 'PROMPT: %s\n' "$1"; case "$1" in *shared.txt*) echo "agent and user" > shared.txt;; esac`, "sh", "{prompt}"}
	h.create(spec)
	h.start("fixer")
	h.waitStatus("fixer", lifecycle.Completed)
	conflictSetup(t, h, repo, "fixer")

	res, err := h.e.AskToResolve(context.Background(), h.project.ID, "fixer", "")
	if err != nil || !slices.Equal(res.Conflicts, []string{"shared.txt"}) || res.Clean || !strings.Contains(res.Instruction, "conflict: shared.txt") || res.Status == "" {
		t.Fatalf("ask: %+v, %v", res, err)
	}
	h.waitStatus("fixer", lifecycle.Completed)
	h.waitLog("fixer", "PROMPT: Shepherd is merging the base branch main into your branch shepherd/fixer")
	if r := h.get("fixer"); r.ResumePrompt != "" || r.ResumeCount != 1 {
		t.Fatalf("after the resume: prompt %q, resumes %d", r.ResumePrompt, r.ResumeCount)
	}
	if !strings.Contains(h.events(), `"event":"worktree:resolve-asked"`) {
		t.Fatal("no worktree:resolve-asked event")
	}
	testutil.Eventually(t, "the worktree seen merging, resolved", func() bool {
		w := h.get("fixer").Workspace
		return w.Merging && len(w.Conflicts) == 0
	})
	m, err := h.e.MergeWorktree(context.Background(), h.project.ID, "fixer", "")
	if err != nil || !m.Merged || !m.FastForward {
		t.Fatalf("merge of the resolution: %+v, %v", m, err)
	}
	if got := gitIn(t, repo, "show", "main:shared.txt"); got != "agent and user" {
		t.Fatalf("main has %q", got)
	}
	// A plain resume afterwards brings the default prompt, not the instruction.
	if args := resumeArgs(h.get("fixer")); args[len(args)-1] != defaultResumePrompt {
		t.Fatalf("resume args %q", args)
	}
}

// A Claude Code agent is resumed in its session with the instruction as its
// prompt (the last of its resume arguments).
func TestAskToResolveClaudeGetsThePrompt(t *testing.T) {
	h, repo := gitHarness(t)
	rec := filepath.Join(t.TempDir(), "calls.jsonl")
	r := h.create(AgentSpec{ID: "cc", Command: fakeClaude, Profile: store.ProfileClaudeJSON,
		Args:       []string{"-p", "--verbose", "--output-format", "stream-json", "work"},
		ResumeArgs: []string{"-p", "--verbose", "--output-format", "stream-json", "--resume", "{sessionId}", "--", "continue"},
		Env:        map[string]string{"FAKE_CLAUDE_MODE": "success", "FAKE_CLAUDE_RECORD": rec}, GraceSec: 2,
		Workspace: &workspace.Workspace{Worktree: true}})
	h.start("cc")
	h.waitStatus("cc", lifecycle.Completed)
	os.WriteFile(filepath.Join(r.Workspace.Path, "shared.txt"), []byte("claude\n"), 0o644) // what it wrote
	conflictSetup(t, h, repo, "cc")
	res, err := h.e.AskToResolve(context.Background(), h.project.ID, "cc", "")
	if err != nil {
		t.Fatal(err)
	}
	h.waitStatus("cc", lifecycle.Completed)
	b, _ := os.ReadFile(rec)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var call struct {
		Args   []string `json:"args"`
		Resume string   `json:"resume"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &call); err != nil {
		t.Fatal(err)
	}
	if call.Resume == "" || call.Args[len(call.Args)-1] != res.Instruction || call.Args[len(call.Args)-2] != "--" {
		t.Fatalf("resumed with %q (session %q)", call.Args, call.Resume)
	}
}

// Refused before anything is done: an agent whose resume cannot bring an
// instruction leaves no merge under way in its worktree.
func TestAskToResolveRefusedBeforeAnything(t *testing.T) {
	h, repo := gitHarness(t)
	spec := worktreeSpec("plain", `echo agent > shared.txt`)
	spec.ResumeArgs = []string{"-c", "true"}
	r := h.create(spec)
	h.start("plain")
	h.waitStatus("plain", lifecycle.Completed)
	conflictSetup(t, h, repo, "plain")
	_, err := h.e.AskToResolve(context.Background(), h.project.ID, "plain", "")
	wantKind(t, err, ErrNotResumable, "cannot be given an instruction")
	cmd := exec.Command("git", "rev-parse", "--verify", "--quiet", "MERGE_HEAD")
	cmd.Dir = r.Workspace.Path
	if cmd.Run() == nil {
		t.Fatal("a refused request left a merge under way")
	}
	h.create(worktreeSpec("never", "true"))
	_, err = h.e.AskToResolve(context.Background(), h.project.ID, "never", "")
	wantKind(t, err, ErrNotResumable, "no resume arguments")
}

// The chip never goes stale: a commit in the worktree and a move of the
// base are seen through the file watch (after changes settle, on the
// engine's clock) and pushed.
func TestWorktreeWatchSeesCommitsAndBaseMoves(t *testing.T) {
	clk := newFakeClock()
	h, repo := gitHarness(t, func(c *Config) { c.Clock = clk; c.WatchFiles = true })
	r := h.create(worktreeSpec("w", "true"))
	seen := func(what string, ok func(w *workspace.Workspace) bool) {
		t.Helper()
		testutil.Eventually(t, what, func() bool {
			clk.Advance(worktrees.Settle)
			return ok(h.get("w").Workspace)
		})
	}
	os.WriteFile(filepath.Join(r.Workspace.Path, "new.txt"), []byte("x\n"), 0o644)
	gitIn(t, r.Workspace.Path, "add", "-A")
	gitIn(t, r.Workspace.Path, "commit", "--quiet", "-m", "by hand")
	seen("the commit in the worktree", func(w *workspace.Workspace) bool { return w.Ahead == 1 && w.Behind == 0 })
	os.WriteFile(filepath.Join(repo, "base.txt"), []byte("y\n"), 0o644)
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "--quiet", "-m", "the base moves")
	seen("the base moving", func(w *workspace.Workspace) bool { return w.Behind == 1 })
	h.rec.mu.Lock()
	pushed := slices.Contains(h.rec.events, EventWorktree)
	h.rec.mu.Unlock()
	if !pushed {
		t.Fatal("no agent:worktree pushed")
	}
}

// A record made before the git dirs were kept gets them at load from the
// repository's own registration — not from the worktree's .git file, which
// its agent may have rewritten — and writes them down.
func TestWorktreeOldRecordPinnedAtLoad(t *testing.T) {
	h, _ := gitHarness(t)
	r := h.create(worktreeSpec("old", "true"))
	want := *r.Workspace
	if want.GitDir == "" || want.CommonDir == "" {
		t.Fatalf("made without its git dirs: %+v", want)
	}
	h.e.Close()
	path := filepath.Join(h.e.Store().AgentDir(h.project.ID, "old"), "record.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	json.Unmarshal(b, &raw)
	ws := raw["workspace"].(map[string]any)
	delete(ws, "gitDir")
	delete(ws, "commonDir")
	delete(ws, "repoGitDir")
	b, _ = json.Marshal(raw)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(want.Path, ".git"), []byte("gitdir: /somewhere/the/agent/built\n"), 0o644)
	h.e = h.engine()
	if _, err := h.e.SelectProject(context.Background(), h.project.ID); err != nil {
		t.Fatal(err)
	}
	got := h.diskRecord("old").Workspace
	if got.GitDir != want.GitDir || got.CommonDir != want.CommonDir || got.RepoGitDir != want.RepoGitDir || got.Problem != "" {
		t.Fatalf("at load: %+v, want the git dirs of %+v", got, want)
	}
	if v, err := h.e.RefreshWorktree(context.Background(), h.project.ID, "old"); err != nil || v.Status.Problem != "" {
		t.Fatalf("refresh %+v, %v", v, err)
	}
}
