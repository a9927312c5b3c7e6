package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mk(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func made(p Protection) []string {
	var out []string
	for _, m := range p.Make {
		s := m.Path
		if m.Dir {
			s += "/"
		}
		if m.Writable {
			s += " (writable)"
		}
		out = append(out, s)
	}
	return out
}

// The CLI's folder in a grant: every existing entry but its state is kept;
// its missing configuration is made first; the home folder's config file
// too. A repository at a grant's root keeps its .git and project config.
func TestProtectUserLevelAndRepo(t *testing.T) {
	root := t.TempDir()
	home, repo := root+"/home", root+"/repo"
	mk(t, home+"/.claude/settings.json", home+"/.claude/.credentials.json", home+"/.claude/projects/p/s.jsonl",
		home+"/.claude/history.jsonl", home+"/.claude/plugins/", home+"/.claude/unknown-new-thing",
		home+"/.claude/.claude.json.tmp.123.456", home+"/.codex/config.toml", home+"/.codex/state_5.sqlite",
		home+"/.codex/state_5.sqlite-wal", home+"/.codex/sessions/", home+"/.codex/auth.json",
		repo+"/.git/config", repo+"/.mcp.json", repo+"/src/a.go")
	g := Grants{WriteDirs: []string{home, repo}}
	p := Protect(g, nil, nil, home)
	want := []string{home + "/.claude/plugins", home + "/.claude/settings.json", home + "/.claude/unknown-new-thing",
		home + "/.codex/config.toml", repo + "/.git", repo + "/.mcp.json"}
	if diff := cmp.Diff(want, p.ReadOnly); diff != "" {
		t.Errorf("read-only (-want +got):\n%s", diff)
	}
	wantMade := []string{home + "/.claude/.claude.json", home + "/.claude/CLAUDE.md", home + "/.claude/hooks/",
		home + "/.claude/commands/", home + "/.claude/agents/", home + "/.claude/skills/", home + "/.claude/output-styles/",
		home + "/.claude/rules/", home + "/.claude/workflows/", home + "/.claude.json",
		home + "/.codex/hooks.json", home + "/.codex/AGENTS.md", home + "/.codex/rules/", home + "/.codex/prompts/",
		home + "/.codex/skills/", home + "/.codex/plugins/", repo + "/.claude/", repo + "/.codex/"}
	if diff := cmp.Diff(wantMade, made(p)); diff != "" {
		t.Errorf("made (-want +got):\n%s", diff)
	}
	if err := MakePlaceholders(p.Make); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(home + "/.claude/.claude.json"); string(b) != "{}\n" {
		t.Errorf(".claude.json: %q", b)
	}
	if fi, err := os.Stat(repo + "/.claude"); err != nil || !fi.IsDir() {
		t.Errorf("the repository's .claude: %v", err)
	}
	// Made once: next time they exist and are kept as they are.
	again := Protect(g, nil, nil, home)
	if len(again.Make) != 0 || !slices.Contains(again.Paths(), home+"/.claude/hooks") {
		t.Errorf("again: made %v, kept %v", made(again), again.Paths())
	}
	for _, s := range []string{"projects", ".credentials.json", "history.jsonl", "sessions", "auth.json", "state_5.sqlite"} {
		for _, kept := range again.Paths() {
			if filepath.Base(kept) == s {
				t.Errorf("the CLI's state %s is kept read-only", kept)
			}
		}
	}
}

// Folders named by the agent's and the user's environment count too, a
// missing one is made (writable) with its configuration; a grant inside a
// CLI folder keeps the folder's config entry that holds it; nothing
// outside the grants is touched; a grant without a repository gets no
// project config made.
func TestProtectEnvFoldersAndGrantsInside(t *testing.T) {
	root := t.TempDir()
	home, work, other := root+"/home", root+"/work", root+"/other"
	mk(t, home+"/.claude/plugins/x/", home+"/.claude/projects/", work+"/", other+"/")
	agentEnv := []string{"CODEX_HOME=" + work + "/codex-home", "CLAUDE_CONFIG_DIR=relative/ignored"}
	userEnv := []string{"CLAUDE_CONFIG_DIR=" + other + "/cc"}
	g := Grants{WriteDirs: []string{work, home + "/.claude/plugins/x", home + "/.claude/projects"}}
	p := Protect(g, agentEnv, userEnv, home)
	if !slices.Contains(p.ReadOnly, home+"/.claude/plugins") || slices.Contains(p.ReadOnly, home+"/.claude/projects") {
		t.Errorf("grants inside ~/.claude: %v", p.ReadOnly)
	}
	ms := made(p)
	if len(ms) == 0 || ms[0] != work+"/codex-home/ (writable)" || !slices.Contains(ms, work+"/codex-home/config.toml") {
		t.Errorf("CODEX_HOME from the agent's env: %v", ms)
	}
	for _, m := range ms {
		if strings.HasPrefix(m, other) || strings.HasPrefix(m, work+"/.claude") {
			t.Errorf("made %s, outside the grants or in a folder that is no repository", m)
		}
	}
	if err := MakePlaceholders(p.Make); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(work + "/codex-home/rules"); err != nil || !fi.IsDir() {
		t.Fatal(err)
	}
	if got := Protect(Grants{}, agentEnv, userEnv, home); len(got.ReadOnly)+len(got.Make) != 0 {
		t.Errorf("no grants: %+v", got)
	}
}

// A symlink at a kept name is pinned as itself, and its target kept too
// when it is in a grant; a placeholder is never made through a symlink.
func TestProtectSymlinks(t *testing.T) {
	root := t.TempDir()
	home, dot := root+"/home", root+"/home/dotfiles"
	mk(t, dot+"/settings.json", home+"/.claude/")
	if err := os.Symlink(dot+"/settings.json", home+"/.claude/settings.json"); err != nil {
		t.Fatal(err)
	}
	g := Grants{WriteDirs: []string{home}}
	p := Protect(g, nil, nil, home)
	if !slices.Contains(p.ReadOnly, home+"/.claude/settings.json") {
		t.Fatalf("the link is not kept: %v", p.ReadOnly)
	}
	if got := WithTargets(p.Paths(), g.WriteDirs); !slices.Contains(got, dot+"/settings.json") {
		t.Errorf("its target is not kept: %v", got)
	}
	// A parent swapped for a symlink: nothing is made through it.
	elsewhere := root + "/elsewhere"
	mk(t, elsewhere+"/")
	if err := os.Symlink(elsewhere, root+"/link"); err != nil {
		t.Fatal(err)
	}
	err := MakePlaceholders([]Placeholder{{Path: root + "/link/settings.json", Content: "{}"}})
	if err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("made through a symlink: %v", err)
	}
	if _, err := os.Stat(elsewhere + "/settings.json"); err == nil {
		t.Error("a placeholder was made through a symlink")
	}
	// An existing name (a dangling symlink) is left as it is.
	if err := os.Symlink(root+"/nowhere", root+"/dangling"); err != nil {
		t.Fatal(err)
	}
	if err := MakePlaceholders([]Placeholder{{Path: root + "/dangling", Content: "{}"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root + "/nowhere"); err == nil {
		t.Error("made through a dangling symlink")
	}
}

func TestFindRepos(t *testing.T) {
	root := t.TempDir()
	g := root + "/g"
	mk(t, g+"/.git/config", g+"/a/.git/config", g+"/a/.claude/settings.json", g+"/a/b/c/.git",
		g+"/node_modules/m/.git/config", g+"/deep/1/2/3/4/5/6/7/.git/config", g+"/a/.git/modules/x/.git/config")
	if err := os.Symlink(root+"/elsewhere", g+"/link"); err != nil {
		t.Fatal(err)
	}
	mk(t, root+"/elsewhere/.git/config")
	mk(t, root+"/home/.claude/plugins/p/.git/config", g+"/x/.claude/y/.git/config")
	s := FindRepos([]string{g, root + "/home/.claude"}, DefaultScan)
	want := []string{g + "/a/.claude", g + "/a/.git", g + "/a/b/c/.git"}
	if diff := cmp.Diff(want, s.Paths); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !s.Cut {
		t.Error("the folder beyond the depth limit did not count as cut")
	}
	if s = FindRepos([]string{g}, ScanLimits{Depth: 6, Dirs: 2}); !s.Cut || s.Dirs != 2 {
		t.Errorf("dirs limit: %+v", s)
	}
}
