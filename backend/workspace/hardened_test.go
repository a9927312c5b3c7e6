package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// hookNames are every hook git knows (githooks(5)).
var hookNames = []string{"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge", "pre-push",
	"pre-receive", "update", "proc-receive", "post-receive", "post-update", "reference-transaction", "push-to-checkout",
	"pre-auto-gc", "post-rewrite", "sendemail-validate", "fsmonitor-watchman", "post-index-change"}

// evil writes an executable script that leaves the marker marks/name when
// anything runs it, and passes its input through (a filter, a driver).
func evil(t *testing.T, marks, name string) string {
	t.Helper()
	path := filepath.Join(marks, "bin", name)
	write(t, path, fmt.Sprintf("#!/bin/sh\ntouch '%s'\ncat\n", filepath.Join(marks, name)))
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// ran lists the markers left: what ran that should not have.
func ran(t *testing.T, marks string) []string {
	t.Helper()
	ents, _ := os.ReadDir(marks)
	var out []string
	for _, e := range ents {
		if e.Name() != "bin" {
			out = append(out, e.Name())
		}
	}
	return out
}

// hooksIn fills dir with every hook, each leaving its marker as prefix+name.
func hooksIn(t *testing.T, dir, marks, prefix string) {
	t.Helper()
	for _, h := range hookNames {
		write(t, filepath.Join(dir, h), fmt.Sprintf("#!/bin/sh\ntouch '%s'\n", filepath.Join(marks, prefix+h)))
		os.Chmod(filepath.Join(dir, h), 0o755)
	}
}

// commandConfig is a git config (section text) that sets every key that
// runs a program to an evil script marked with prefix.
func commandConfig(t *testing.T, marks, prefix, hooks string) string {
	t.Helper()
	e := func(name string) string { return evil(t, marks, prefix+name) }
	return fmt.Sprintf(`[core]
	fsmonitor = %s
	hooksPath = %s
	sshCommand = %s
	askPass = %s
	pager = %s
	editor = %s
	gitProxy = %s
	alternateRefsCommand = %s
[sequence]
	editor = %s
[diff]
	external = %s
[diff "%[11]s"]
	command = %s
	textconv = %s
[filter "%[11]s"]
	clean = %s
	smudge = %s
	required = true
[merge "%[11]s"]
	driver = %s %%A %%O %%B
[credential]
	helper = %s
[gpg]
	program = %s
[pager]
	status = %s
	diff = %s
[interactive]
	diffFilter = %s
`, e("fsmonitor"), hooks, e("sshcommand"), e("askpass"), e("pager"), e("editor"), e("gitproxy"), e("alternaterefs"),
		e("sequence-editor"), e("diff-external"), prefix+"drv", e("diff-command"), e("textconv"),
		e("filter-clean"), e("filter-smudge"), e("merge-driver"), e("credential"), e("gpg"),
		e("pager-status"), e("pager-diff"), e("difffilter"))
}

// plant makes w's repository and worktree as hostile as an agent could:
// the worktree's .git points at a git dir the agent built (with a config
// that runs its programs everywhere, and hooks), the repository's own
// config (an agent with @write:<repo>) names programs and includes a file
// of the checkout that names more, every hook of the repository is
// planted, .gitattributes send every file through those drivers, and the
// engine's environment carries GIT_* variables that would steer git.
func plant(t *testing.T, repo string, w Workspace, marks string) {
	t.Helper()
	// The agent's own git dir, in its worktree, and the .git file naming it.
	evilDir := filepath.Join(w.Path, ".evilgit")
	run(t, repo, "clone", "--quiet", "--bare", repo, evilDir)
	hooksIn(t, filepath.Join(evilDir, "hooks"), marks, "agentgit-hook-")
	hooksIn(t, filepath.Join(w.Path, ".evilhooks"), marks, "agentgit-hookspath-")
	cfg := read(t, filepath.Join(evilDir, "config"))
	cfg = strings.Replace(cfg, "bare = true", "bare = false", 1)
	write(t, filepath.Join(evilDir, "config"), cfg+commandConfig(t, marks, "agentgit-", filepath.Join(w.Path, ".evilhooks"))+
		"[commit]\n\tgpgSign = true\n[include]\n\tpath = "+filepath.Join(w.Path, "agent.inc")+"\n")
	write(t, filepath.Join(w.Path, ".git"), "gitdir: "+evilDir+"\n")
	// The repository's config (what @write:<repo> could reach), and a file
	// of the main checkout it includes.
	hooksIn(t, filepath.Join(repo, ".git", "hooks"), marks, "repo-hook-")
	hooksIn(t, filepath.Join(repo, "evilhooks"), marks, "repo-hookspath-")
	f, err := os.OpenFile(filepath.Join(repo, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, commandConfig(t, marks, "repo-", filepath.Join(repo, "evilhooks"))+"[include]\n\tpath = ../evil.inc\n")
	f.Close()
	inc := fmt.Sprintf("[filter \"incdrv\"]\n\tclean = %s\n\tsmudge = %s\n\tprocess = %s\n[merge \"incdrv\"]\n\tdriver = %s %%A %%O %%B\n[core]\n\tfsmonitor = %s\n",
		evil(t, marks, "inc-filter-clean"), evil(t, marks, "inc-filter-smudge"), evil(t, marks, "inc-filter-process"),
		evil(t, marks, "inc-merge-driver"), evil(t, marks, "inc-fsmonitor"))
	write(t, filepath.Join(repo, "evil.inc"), inc)
	write(t, filepath.Join(w.Path, "agent.inc"), inc)
	// Every file through every driver.
	attrs := "* filter=repo-drv diff=repo-drv merge=repo-drv\n*.txt filter=incdrv merge=incdrv\n*.md filter=agentgit-drv diff=agentgit-drv merge=agentgit-drv\n"
	write(t, filepath.Join(w.Path, ".gitattributes"), attrs)
	// The engine's environment.
	for k, v := range map[string]string{
		"GIT_DIR": evilDir, "GIT_WORK_TREE": w.Path, "GIT_EXTERNAL_DIFF": evil(t, marks, "env-external-diff"),
		"GIT_CONFIG_PARAMETERS": "'core.fsmonitor'='" + evil(t, marks, "env-fsmonitor") + "'",
		"GIT_CONFIG_COUNT":      "1", "GIT_CONFIG_KEY_0": "core.hooksPath", "GIT_CONFIG_VALUE_0": filepath.Join(repo, "evilhooks"),
		"GIT_SSH_COMMAND": evil(t, marks, "env-ssh"), "GIT_PAGER": evil(t, marks, "env-pager"), "GIT_EDITOR": evil(t, marks, "env-editor"),
		"GIT_ASKPASS": evil(t, marks, "env-askpass"),
	} {
		t.Setenv(k, v)
	}
}

// Nothing an agent planted runs when the engine runs git: not through a git
// dir it built, nor the repository's config it reached, nor an included
// file, nor a hook, nor the engine's environment — on every operation the
// engine runs (create, status, diff, plan, commit and merge, the merge of
// the base for the agent, remove). The work is still done.
func TestHardenedGitRunsNothingPlanted(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "1\n2\n3\n4\n5\n6\n", "clash.txt": "base\n", "doc.md": "doc\n"})
	w := create(t, repo, "evil")
	marks := t.TempDir()
	write(t, filepath.Join(w.Path, "a.txt"), "one\n2\n3\n4\n5\n6\n")
	write(t, filepath.Join(w.Path, "new.md"), "the agent's\n")
	write(t, filepath.Join(w.Path, "clash.txt"), "agent\n")
	// The user moves the base: a.txt elsewhere (a real three-way merge of
	// it), clash.txt where the agent did.
	for k, v := range map[string]string{"a.txt": "1\n2\n3\n4\n5\nsix\n", "clash.txt": "user\n"} {
		write(t, filepath.Join(repo, k), v)
	}
	commitAll(t, repo, "user moves the base")
	plant(t, repo, w, marks)
	ctx := context.Background()

	w2, err := Create(ctx, Options{Project: repo, Dir: filepath.Join(filepath.Dir(w.Path), "evil2"), AgentID: "evil2"})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if read(t, filepath.Join(w2.Path, "clash.txt")) != "user\n" {
		t.Fatal("the second worktree is not the base's")
	}
	st, err := StatusOf(ctx, w)
	if err != nil || !st.Dirty || st.Behind != 1 {
		t.Fatalf("status %+v, %v", st, err)
	}
	d, err := DiffOf(ctx, w)
	if err != nil {
		t.Fatalf("diff: %v", err)
	}
	var paths []string
	for _, f := range d.Files {
		paths = append(paths, f.Path)
	}
	for _, want := range []string{"a.txt", "clash.txt", "new.md", ".gitattributes"} {
		if !slices.Contains(paths, want) {
			t.Fatalf("diff lacks %s: %v", want, paths)
		}
	}
	plan, err := PlanMerge(ctx, w)
	if err != nil || plan.Blocked != "" || plan.Identity != "Test <test@example.com>" {
		t.Fatalf("plan %+v, %v", plan, err)
	}
	// The merge: the work committed first (hooks, filters), then merged
	// (merge drivers, hooks): clash.txt conflicts, aborted.
	res, err := MergeIntoBase(ctx, w, "the agent's work")
	var ce *ConflictError
	if !errors.As(err, &ce) || !slices.Equal(ce.Files, []string{"clash.txt"}) || res.Committed == "" {
		t.Fatalf("merge: %+v, %v", res, err)
	}
	// Asked of the agent: the base merged into its branch in the worktree.
	bm, err := StartBaseMerge(ctx, w, "")
	if err != nil || !slices.Equal(bm.Conflicts, []string{"clash.txt"}) {
		t.Fatalf("merge of the base: %+v, %v", bm, err)
	}
	if got := read(t, filepath.Join(w.Path, "a.txt")); got != "one\n2\n3\n4\n5\nsix\n" {
		t.Fatalf("a.txt not merged by git's own text merge: %q", got)
	}
	write(t, filepath.Join(w.Path, "clash.txt"), "agent and user\n")
	res, err = MergeIntoBase(ctx, w, "")
	if err != nil || !res.Merged || !res.FastForward {
		t.Fatalf("merge of the resolution: %+v, %v", res, err)
	}
	if got := read(t, filepath.Join(repo, "clash.txt")); got != "agent and user\n" {
		t.Fatalf("main has %q", got)
	}
	for _, x := range []Workspace{w, w2} {
		if err := End(ctx, x, Discard, true, ""); err != nil {
			t.Fatalf("remove %s: %v", x.Path, err)
		}
		if _, err := os.Stat(x.Path); !os.IsNotExist(err) {
			t.Fatalf("%s still there", x.Path)
		}
	}
	if got := ran(t, marks); len(got) > 0 {
		t.Fatalf("ran what the agent planted: %v", got)
	}
}

// The user's own configuration is kept: a filter driver of their global
// config runs on the engine's commit (git-lfs is one), the same driver
// named in the repository's config does not.
func TestHardenedGitKeepsTheUsersOwnConfig(t *testing.T) {
	home := gitEnv(t)
	marks := t.TempDir()
	f, _ := os.OpenFile(filepath.Join(home, ".gitconfig"), os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintf(f, "[filter \"users\"]\n\tclean = %s\n", evil(t, marks, "users-clean"))
	f.Close()
	dir := filepath.Join(t.TempDir(), "project")
	os.MkdirAll(dir, 0o755)
	run(t, dir, "init", "--quiet", "-b", "main")
	write(t, filepath.Join(dir, ".gitattributes"), "*.txt filter=users\n*.md filter=repos\n")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	commitAll(t, dir, "initial")
	os.Remove(filepath.Join(marks, "users-clean")) // the test's own commit ran it
	run(t, dir, "config", "filter.repos.clean", evil(t, marks, "repo-clean"))
	w := create(t, dir, "own")
	write(t, filepath.Join(w.Path, "b.txt"), "b\n")
	write(t, filepath.Join(w.Path, "c.md"), "c\n")
	if _, err := MergeIntoBase(context.Background(), w, ""); err != nil {
		t.Fatal(err)
	}
	if got := ran(t, marks); !slices.Equal(got, []string{"users-clean"}) {
		t.Fatalf("ran %v, want only the user's own filter", got)
	}
}

func TestHardenConfig(t *testing.T) {
	dir := "/src/repo"
	entries := []configEntry{
		{scope: "system", origin: "file:/etc/gitconfig", key: "credential.https://example.com.helper", value: "store"},
		{scope: "global", origin: "file:/home/u/.gitconfig", key: "user.name", value: "U"},
		{scope: "global", origin: "file:/home/u/.gitconfig", key: "filter.lfs.clean", value: "git-lfs clean -- %f"},
		{scope: "global", origin: "file:/home/u/.gitconfig", key: "credential.helper", value: "cache"},
		{scope: "global", origin: "file:/home/u/.gitconfig", key: "hook.pre-commit.command", value: "lint"},
		{scope: "local", origin: "file:.git/config", key: "credential.helper", value: "evil"},
		{scope: "local", origin: "file:.git/config", key: "filter.lfs.clean", value: "evil"},
		{scope: "local", origin: "file:.git/config", key: "filter.Evil.Drv.smudge", value: "evil"},
		{scope: "local", origin: "file:.git/config", key: "merge.x.driver", value: "evil %A"},
		{scope: "local", origin: "file:.git/config", key: "core.fsmonitor", value: "evil"},
		{scope: "local", origin: "file:.git/config", key: "gpg.x509.program", value: "evil"},
		{scope: "local", origin: "file:.git/config", key: "user.email", value: "u@x"},
		{scope: "global", origin: "file:/src/repo/.gitconfig", key: "diff.x.textconv", value: "evil"}, // included from the tree
		{scope: "global", origin: "file:/home/u/.gitconfig", key: "core.sshCommand", value: "ssh -i key"},
		{scope: "worktree", origin: "file:/src/repo/.git/worktrees/a/config.worktree", key: "core.sshCommand", value: "evil"},
		{scope: "command", origin: "command line:", key: "core.hooksPath", value: "/dev/null"},
	}
	got := hardenConfig(entries, dir, []string{dir})
	want := []setting{
		{"filter.lfs.clean", "git-lfs clean -- %f"},
		{"credential.helper", ""}, {"credential.helper", "cache"},
		{"hook.pre-commit.command", ":"},
		{"filter.Evil.Drv.smudge", ""},
		{"merge.x.driver", mergeFileDriver},
		{"core.fsmonitor", "false"},
		{"gpg.x509.program", "gpgsm"},
		{"diff.x.textconv", ""},
		{"core.sshcommand", "ssh -i key"},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(setting{})); d != "" {
		t.Fatalf("(-want +got)\n%s", d)
	}
}

func TestParseConfigList(t *testing.T) {
	in := "system\x00file:/etc/gitconfig\x00core.editor\nvim\x00local\x00file:.git/config\x00core.bare\nfalse\x00local\x00file:.git/config\x00x.flag\x00"
	got, err := parseConfigList([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []configEntry{{"system", "file:/etc/gitconfig", "core.editor", "vim", true},
		{"local", "file:.git/config", "core.bare", "false", true}, {"local", "file:.git/config", "x.flag", "", false}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(configEntry{})); d != "" {
		t.Fatalf("(-want +got)\n%s", d)
	}
	for _, bad := range []string{"local\x00file:x\x00", "\x00o\x00k\nv\x00"} {
		if _, err := parseConfigList([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// FuzzParseConfigList: any input gives entries with a scope and a key, or
// an error; hardenConfig of them never panics and sets only keys that run a
// program, each of which the input had an untrusted entry for.
func FuzzParseConfigList(f *testing.F) {
	f.Add([]byte("local\x00file:.git/config\x00filter.a.clean\nx\x00global\x00file:/h/.gitconfig\x00core.editor\nvi\x00"))
	f.Add([]byte("worktree\x00file:/r/.git/worktrees/w/config.worktree\x00merge.a.b.driver\nx\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := parseConfigList(b)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.scope == "" || e.key == "" {
				t.Fatalf("entry %+v", e)
			}
		}
		for _, s := range hardenConfig(entries, "/r", []string{"/r"}) {
			sec, sub, name, ok := splitKey(s.key)
			if _, _, cmd := neutral(sec, sub, name); !ok || !cmd {
				t.Fatalf("override of %q, which runs nothing", s.key)
			}
		}
	})
}

// The worktree's git dir comes from the repository's registration, never
// from its .git file: an old record (none kept) gets it from there, and a
// rewritten .git file changes nothing.
func TestPinFromRegistration(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := create(t, repo, "pin")
	if w.GitDir != filepath.Join(w.CommonDir, "worktrees", "pin") || w.CommonDir != filepath.Join(repo, ".git") || w.RepoGitDir != w.CommonDir {
		t.Fatalf("made: git dir %s, common %s, repo's %s", w.GitDir, w.CommonDir, w.RepoGitDir)
	}
	write(t, filepath.Join(w.Path, ".git"), "gitdir: /elsewhere\n")
	old := w
	old.GitDir, old.CommonDir, old.RepoGitDir = "", "", ""
	got, err := Pin(context.Background(), old)
	if err != nil || got.GitDir != w.GitDir || got.CommonDir != w.CommonDir || got.RepoGitDir != w.RepoGitDir {
		t.Fatalf("pinned %+v, %v", got, err)
	}
	// A registration that names another folder is not this worktree's.
	write(t, filepath.Join(w.GitDir, "gitdir"), "/somewhere/else/.git\n")
	if _, err := Pin(context.Background(), w); err == nil {
		t.Fatal("a registration naming another folder was accepted")
	}
	if _, p, _ := Verify(context.Background(), w); !strings.Contains(p, "is no longer a worktree of") {
		t.Fatalf("problem %q", p)
	}
}
