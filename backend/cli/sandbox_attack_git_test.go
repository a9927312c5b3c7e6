package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"shepherd/backend/store"
	"shepherd/backend/workspace"
	"shepherd/internal/testutil"
)

// The engine is no deputy of the box (SPEC, threat model): git run by the
// engine as the user on a tree a sandboxed agent wrote never runs what the
// agent wrote, and the engine never follows or blocks on what it made
// there. Each attack is a real sandboxed worktree agent, with and without
// @network, as root and as an unprivileged uid.

func init() {
	registerAttacks("git", gitAttacks)
	// evilgitdir:<marks>: build a git dir in the worktree (a copy of the
	// repository's, whose config runs the agent's programs through
	// core.fsmonitor, core.hooksPath, diff.external, textconv and a filter
	// driver named by .gitattributes) and point the worktree's .git file at
	// it. Each program leaves a marker in marks, where only the engine (the
	// user, outside the box) could write.
	registerOp("evilgitdir", func(marks string) error {
		wt, _ := os.Getwd()
		b, err := os.ReadFile(filepath.Join(wt, ".git"))
		if err != nil {
			return err
		}
		admin := strings.TrimSpace(strings.TrimPrefix(string(b), "gitdir:"))
		c, err := os.ReadFile(filepath.Join(admin, "commondir"))
		if err != nil {
			return err
		}
		common := filepath.Join(admin, strings.TrimSpace(string(c)))
		evil := filepath.Join(wt, ".agentgit")
		if err := copyTree(common, evil); err != nil {
			return err
		}
		hooks := filepath.Join(wt, ".agenthooks")
		if err := writeHooks(hooks, marks, "gitdir-hook-"); err != nil {
			return err
		}
		script := func(name string) string {
			p := filepath.Join(wt, ".agentbin", name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(fmt.Sprintf("#!/bin/sh\ntouch '%s'\ncat\n", filepath.Join(marks, "gitdir-"+name))), 0o755)
			return p
		}
		cfg := fmt.Sprintf("[core]\n\tbare = false\n\tfsmonitor = %s\n\thooksPath = %s\n[diff]\n\texternal = %s\n"+
			"[diff \"evil\"]\n\tcommand = %s\n\ttextconv = %s\n[filter \"evil\"]\n\tclean = %s\n\tsmudge = %s\n\tprocess = %s\n",
			script("fsmonitor"), hooks, script("diff-external"), script("diff-command"), script("textconv"),
			script("filter-clean"), script("filter-smudge"), script("filter-process"))
		f, err := os.OpenFile(filepath.Join(evil, "config"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		f.WriteString(cfg)
		f.Close()
		if err := os.WriteFile(filepath.Join(wt, ".gitattributes"), []byte("* filter=evil diff=evil\n"), 0o644); err != nil {
			return err
		}
		os.WriteFile(filepath.Join(wt, "work.txt"), []byte("the agent's work\n"), 0o644)
		return os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+evil+"\n"), 0o644)
	})
	// githooks:<hooks folder>,<marks>: plant every hook there (the
	// repository's .git/hooks, through @write:<repo>).
	registerOp("githooks", func(val string) error {
		dir, marks, _ := strings.Cut(val, ",")
		return writeHooks(dir, marks, "repo-hook-")
	})
	// symlink:<target>,<name>: a symlink in the agent's cwd.
	registerOp("symlink", func(val string) error {
		target, name, _ := strings.Cut(val, ",")
		return os.Symlink(target, name)
	})
	// mkfifo:<name>: a named pipe in the agent's cwd.
	registerOp("mkfifo", func(name string) error { return syscall.Mkfifo(name, 0o644) })
}

var gitHookNames = []string{"pre-commit", "pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-commit",
	"post-checkout", "post-merge", "reference-transaction", "post-index-change", "pre-auto-gc", "post-rewrite"}

func writeHooks(dir, marks, prefix string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, h := range gitHookNames {
		body := fmt.Sprintf("#!/bin/sh\ntouch '%s'\n", filepath.Join(marks, prefix+h))
		if err := os.WriteFile(filepath.Join(dir, h), []byte(body), 0o755); err != nil {
			return err
		}
	}
	return nil
}

func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

// gitArena is a git project of the arena's engine, and a folder for
// markers that only something run outside any box could write.
type gitArena struct {
	*arena
	proj, repo, marks string
	n                 int
}

func newGitArena(t *testing.T, a *arena) *gitArena {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	// The engine commits as the user: their identity, in their global
	// config (the engine's git drops GIT_* variables).
	cfg := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "git", "config")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = The User\n\temail = user@example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := &gitArena{arena: a, repo: filepath.Join(t.TempDir(), "repo"), marks: filepath.Join(a.outside, "marks")}
	os.MkdirAll(g.marks, 0o755)
	os.MkdirAll(g.repo, 0o755)
	os.WriteFile(filepath.Join(g.repo, "a.txt"), []byte("one\n"), 0o644)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "initial"}} {
		gitCmd(t, g.repo, args...)
	}
	var p store.Project
	okJSON(t, &p, "add-project", g.repo, "--name", "gitarena")
	g.proj = p.ID
	return g
}

func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "core.hooksPath=/dev/null"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// agent creates a worktree agent of the git project sandboxed with perms,
// runs ops, and returns its record once its run has ended and the engine
// has looked at its worktree after it.
func (g *gitArena) agent(t *testing.T, id string, perms []string, ops ...string) store.Record {
	t.Helper()
	self, _ := os.Executable()
	body := map[string]any{"id": id, "command": self, "args": ops, "permissions": perms,
		"env": map[string]string{asAttacker: "1"}, "workspace": map[string]any{"worktree": true}}
	if _, err := g.c.JSON(t.Context(), "POST", "/v1/projects/"+g.proj+"/agents", body, nil); err != nil {
		t.Fatalf("create %s: %v", id, err)
	}
	ok(t, "start", "gitarena", id)
	r := waitStatus(t, g.proj, id, "completed", "failed")
	// The engine looks at the worktree when the run ends.
	testutil.Eventually(t, id+"'s worktree looked at after its run", func() bool {
		w := record(t, g.proj, id).Workspace
		return w != nil && w.CheckedAt != nil && r.StoppedAt != nil && !w.CheckedAt.Before(*r.StoppedAt)
	})
	return r
}

func (g *gitArena) log(t *testing.T, r store.Record) string {
	b, _ := os.ReadFile(r.LogPath)
	return string(b)
}

// call is an API call that must answer, within a while, with one of codes.
func (g *gitArena) call(t *testing.T, method, path string, body any, out any) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err := g.c.JSON(ctx, method, "/v1/projects/"+g.proj+"/agents/"+path, body, out)
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		t.Fatalf("%s %s did not answer in 30 s: %v", method, path, err)
	}
	return err
}

func (g *gitArena) noMarks(t *testing.T, when string) {
	t.Helper()
	ents, _ := os.ReadDir(g.marks)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) > 0 {
		t.Fatalf("%s: the engine ran what the agent wrote: %v", when, names)
	}
}

func gitAttacks(t *testing.T, a *arena) {
	g := newGitArena(t, a)
	secret := a.p.EngineFile()
	info, err := os.ReadFile(secret)
	if err != nil {
		t.Fatal(err)
	}
	var eng struct{ Token string }
	json.Unmarshal(info, &eng)

	// The agent points its .git file at a git dir it built: nothing of its
	// config runs when the run ends, on a diff, a refresh, a merge's plan,
	// nor when it is merged (commit and merge) and removed.
	t.Run("gitdir", func(t *testing.T) {
		// Sandboxed, the box keeps .git read-only, so the pointer cannot be
		// rewritten (the rest of the attack is planted all the same); run
		// unsandboxed — the user's own agent, with nothing in the way — the
		// rewrite works, and only the engine's pinned git stands between it
		// and the user.
		modes := append([]struct {
			name  string
			perms func(a *arena) []string
		}{{"unsandboxed", func(*arena) []string { return nil }}}, netModes...)
		for i, m := range modes {
			id := "gitdir" + strconv.Itoa(i)
			r := g.agent(t, id, m.perms(a), "evilgitdir:"+g.marks)
			if log := g.log(t, r); m.name == "unsandboxed" {
				worked(t, log, "evilgitdir:"+g.marks)
			} else if !strings.Contains(log, "OK evilgitdir:") && !strings.Contains(log, "read-only file system") {
				t.Fatalf("%s: the attack neither worked nor was refused by the box:\n%s", m.name, log)
			}
			g.noMarks(t, m.name+": the run's end")
			var d workspace.Diff
			if err := g.call(t, "GET", id+"/diff", nil, &d); err != nil {
				t.Fatalf("diff: %v", err)
			}
			g.noMarks(t, m.name+": the diff")
			if err := g.call(t, "POST", id+"/worktree/refresh", nil, nil); err != nil {
				t.Fatalf("refresh: %v", err)
			}
			if err := g.call(t, "GET", id+"/worktree/merge", nil, nil); err != nil {
				t.Fatalf("plan: %v", err)
			}
			g.noMarks(t, m.name+": a refresh")
			if err := g.call(t, "DELETE", id+"?worktree=merge", nil, nil); err != nil {
				t.Fatalf("remove with merge: %v", err)
			}
			g.noMarks(t, m.name+": the merge and the removal")
			if b, err := os.ReadFile(filepath.Join(g.repo, "work.txt")); err != nil || string(b) != "the agent's work\n" {
				t.Fatalf("the agent's work was not merged: %q, %v", b, err)
			}
			gitCmd(t, g.repo, "rm", "-rq", "--", ".agentgit", ".agenthooks", ".agentbin", ".gitattributes", "work.txt")
			gitCmd(t, g.repo, "commit", "-qm", "tidy")
		}
	})

	// With @write:<repo> the agent plants hooks in the repository: the
	// engine's next `git worktree add` and a merge run none of them.
	t.Run("repo hooks", func(t *testing.T) {
		hooks := filepath.Join(g.repo, ".git", "hooks")
		for i, m := range netModes {
			id := "hooks" + strconv.Itoa(i)
			perms := append(m.perms(a), "@write:"+g.repo)
			g.agent(t, id, perms, "githooks:"+hooks+","+g.marks, "write:work"+strconv.Itoa(i)+".txt")
			// Whether the box let it write there or not, nothing runs.
			g.agent(t, "next"+strconv.Itoa(i), m.perms(a), "write:next.txt")
			g.noMarks(t, m.name+": git worktree add")
			var res workspace.MergeResult
			if err := g.call(t, "POST", id+"/worktree/merge", map[string]string{"message": "hooks test"}, &res); err != nil || !res.Merged {
				t.Fatalf("merge: %+v, %v", res, err)
			}
			g.noMarks(t, m.name+": a merge")
			for _, x := range []string{id, "next" + strconv.Itoa(i)} {
				if err := g.call(t, "DELETE", x+"?worktree=discard&discardChanges=true", nil, nil); err != nil {
					t.Fatalf("remove %s: %v", x, err)
				}
			}
			g.noMarks(t, m.name+": the removals")
		}
	})

	// An untracked symlink to a secret of the user's shows as its text, and
	// a named pipe (through a symlink git lists) never blocks the diff.
	t.Run("diff reads no link and no pipe", func(t *testing.T) {
		for i, m := range netModes {
			id := "leak" + strconv.Itoa(i)
			g.agent(t, id, m.perms(a), "symlink:"+secret+",leak", "mkfifo:fifo", "symlink:fifo,pipe")
			var d workspace.Diff
			if err := g.call(t, "GET", id+"/diff", nil, &d); err != nil {
				t.Fatalf("diff: %v", err)
			}
			b, _ := json.Marshal(d)
			if eng.Token == "" || strings.Contains(string(b), eng.Token) {
				t.Fatalf("the diff shows the user's token: %s", b)
			}
			var leak *workspace.FileDiff
			for i := range d.Files {
				if d.Files[i].Path == "leak" {
					leak = &d.Files[i]
				}
			}
			if leak == nil || leak.Mode != "120000" || len(leak.Hunks) != 1 || leak.Hunks[0].Lines[0].Text != secret {
				t.Fatalf("leak = %+v", leak)
			}
			if err := g.call(t, "DELETE", id+"?worktree=discard&discardChanges=true", nil, nil); err != nil {
				t.Fatalf("remove: %v", err)
			}
		}
	})
}
