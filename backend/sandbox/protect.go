package sandbox

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// What a box wrote is data, never code (SPEC, threat model): inside its
// write grants a box still may not write what runs as the user outside it —
// a repository's git dir (hooks, config: git runs them), and the
// configuration the agent CLIs read in the user's own unsandboxed runs
// (settings, hooks, plugins, MCP servers, rules). Those paths are bound
// read-only in the box after its grants are bound writable (Linux), or
// denied by the Seatbelt profile (macOS).

// Protection is what the box of one agent keeps read-only inside its write
// grants.
type Protection struct {
	// ReadOnly are existing paths (folders, files, or symlinks, which are
	// pinned as themselves), absolute and resolved.
	ReadOnly []string
	// Make are configuration paths that do not exist yet, in the order they
	// must be made (a folder before what goes in it): the engine makes each,
	// empty, before the start, so that it can be bound read-only too
	// (otherwise the box could create it).
	Make []Placeholder
}

// Placeholder is a configuration path the engine makes before a start: an
// empty folder, or a file with Content. Writable: made (it holds what is
// kept read-only) but not kept read-only itself — a CLI's own folder.
type Placeholder struct {
	Path     string
	Dir      bool
	Content  string
	Writable bool
}

// Paths are every path to keep read-only: ReadOnly's and Make's.
func (p Protection) Paths() []string {
	out := append([]string{}, p.ReadOnly...)
	for _, m := range p.Make {
		if !m.Writable {
			out = append(out, m.Path)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// agentConfig is what an agent CLI keeps in its user-level folder: which
// entries are its own state (written on every run: sessions, transcripts,
// history, credentials — refreshed tokens must be kept —, caches, its
// sqlite state, logs), left writable; every other existing entry is its
// configuration, bound read-only; and the configuration names it reads that
// are made when missing.
type agentConfig struct {
	cli    string
	envVar string // the folder's variable (CLAUDE_CONFIG_DIR, CODEX_HOME)
	dir    string // the folder under the home folder when the variable is unset
	state  []string
	make   []configName
	// homeFiles are configuration files kept in the home folder itself.
	homeFiles []configName
}

type configName struct {
	name    string
	dir     bool
	content string
}

// agentConfigs are the agent CLIs whose configuration no box may write.
// The state lists were measured with the real CLIs (Claude Code 2.1.197,
// Codex 0.169): what a run, a resume and a token refresh write.
var agentConfigs = []agentConfig{
	{
		cli: "Claude Code", envVar: "CLAUDE_CONFIG_DIR", dir: ".claude",
		state: []string{"projects", "sessions", "session-env", "shell-snapshots", "todos", "statsig", "history.jsonl",
			".credentials.json", "cache", "debug", "file-history", "plans", "paste-cache", "telemetry", "usage-data",
			"startup-perf", "tasks", "teams", "traces", "uploads", "shares", "feedback-bundles", "dump-prompts",
			"mcp-needs-auth-cache.json", "gh-pr-status-cache.json", "stats-cache.json", ".last-cleanup",
			".deep-link-register-failed", "*.tmp.*"},
		// settings.json: hooks, status line, apiKeyHelper, env; .claude.json:
		// MCP servers (with CLAUDE_CONFIG_DIR it lives here); CLAUDE.md and
		// rules: instructions; the folders: plugins, hooks, commands, agents,
		// skills, output styles.
		make: []configName{{name: "settings.json", content: "{}\n"}, {name: ".claude.json", content: "{}\n"},
			{name: "CLAUDE.md"}, {name: "plugins", dir: true}, {name: "hooks", dir: true}, {name: "commands", dir: true},
			{name: "agents", dir: true}, {name: "skills", dir: true}, {name: "output-styles", dir: true},
			{name: "rules", dir: true}, {name: "workflows", dir: true}},
		homeFiles: []configName{{name: ".claude.json", content: "{}\n"}},
	},
	{
		cli: "Codex", envVar: "CODEX_HOME", dir: ".codex",
		state: []string{"sessions", "archived_sessions", "history.jsonl", "auth.json", "log", "logs", "*.sqlite",
			"*.sqlite-shm", "*.sqlite-wal", "*.sqlite-journal", ".sqlite-maintenance.lock", ".tmp", "tmp", "cache",
			"shell_snapshots", "thread-writer-locks", "installation_id", "version.json", "models_cache.json",
			".sandbox_migration"},
		// config.toml: notify, MCP servers, profiles; hooks.json; rules:
		// commands run without asking; AGENTS.md: instructions; prompts,
		// skills and plugins.
		make: []configName{{name: "config.toml"}, {name: "hooks.json", content: "{}\n"}, {name: "AGENTS.md"},
			{name: "rules", dir: true}, {name: "prompts", dir: true}, {name: "skills", dir: true}, {name: "plugins", dir: true}},
	},
}

// projectConfig are the agent CLIs' configuration in a project's folder,
// which the user's own runs there read: kept read-only where present at the
// root of a write grant or of a repository in one. The folders are made
// (empty: git does not see an empty folder) at a grant's root that is a
// repository; .mcp.json is not (git would show it), and Claude Code asks
// before it uses a project's MCP servers.
var projectConfig = []configName{{name: ".claude", dir: true}, {name: ".codex", dir: true}, {name: ".mcp.json"}}

// Protect finds what the box of g keeps read-only inside its write grants:
// the .git (folder, or a worktree's file) at the root of every grant; the
// project configuration of the agent CLIs there; and, where they lie inside
// a grant (or hold one), the CLIs' user-level folders (each folder named by
// agentEnv, the agent's environment, or userEnv, the user's, and the one in
// home) and their files in home. Nested repositories are found by the shim
// (FindRepos). It reads the file system and changes nothing; paths that
// cannot be resolved are left out (they cannot be in a grant).
func Protect(g Grants, agentEnv, userEnv []string, home string) Protection {
	var p Protection
	if len(g.WriteDirs) == 0 {
		return p
	}
	inGrant := func(path string) bool {
		for _, w := range g.WriteDirs {
			if under(path, w) {
				return true
			}
		}
		return false
	}
	var userDirs []string
	for _, c := range agentConfigs {
		var dirs []string
		for _, d := range []string{envValue(agentEnv, c.envVar), envValue(userEnv, c.envVar), joinHome(home, c.dir)} {
			if d == "" || !filepath.IsAbs(d) {
				continue
			}
			if d = RealPath(d); !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
		for _, d := range dirs {
			userDirs = append(userDirs, d)
			p.userLevel(c, d, g.WriteDirs, inGrant(d))
		}
		for _, f := range c.homeFiles {
			if home == "" || !filepath.IsAbs(home) {
				continue
			}
			h := RealPath(home)
			if !inGrant(filepath.Join(h, f.name)) {
				continue
			}
			p.keep(h, f, true)
		}
	}
	for _, w := range g.WriteDirs {
		repo := false
		if _, err := os.Lstat(filepath.Join(w, ".git")); err == nil {
			repo = true
			p.ReadOnly = append(p.ReadOnly, filepath.Join(w, ".git"))
		}
		for _, f := range projectConfig {
			if slices.Contains(userDirs, filepath.Join(w, f.name)) {
				continue // the CLI's user-level folder, whose state stays writable
			}
			p.keep(w, f, repo && f.dir)
		}
	}
	slices.Sort(p.ReadOnly)
	p.ReadOnly = slices.Compact(p.ReadOnly)
	return p
}

// userLevel adds what of the CLI folder d the box must not write: all of
// it but the CLI's state when d lies in a grant (made, with its
// configuration names, when missing); when d holds grants, the top-level
// entries that hold them and are not state.
func (p *Protection) userLevel(c agentConfig, d string, grants []string, inGrant bool) {
	if !inGrant {
		for _, w := range grants {
			if !under(w, d) || w == d {
				continue
			}
			top := strings.SplitN(strings.TrimPrefix(w, d+string(filepath.Separator)), string(filepath.Separator), 2)[0]
			if !isState(c, top) {
				p.ReadOnly = append(p.ReadOnly, filepath.Join(d, top))
			}
		}
		return
	}
	fi, err := os.Lstat(d)
	switch {
	case errors.Is(err, os.ErrNotExist):
		p.Make = append(p.Make, Placeholder{Path: d, Dir: true, Writable: true})
	case err != nil || !fi.IsDir():
		return // nothing the CLI could use
	default:
		ents, err := os.ReadDir(d)
		if err != nil {
			return
		}
		for _, e := range ents {
			if !isState(c, e.Name()) {
				p.ReadOnly = append(p.ReadOnly, filepath.Join(d, e.Name()))
			}
		}
	}
	for _, n := range c.make {
		p.keep(d, n, true)
	}
}

// keep adds dir/n: read-only when it exists, else made (when mk) and then
// read-only.
func (p *Protection) keep(dir string, n configName, mk bool) {
	full := filepath.Join(dir, n.name)
	if _, err := os.Lstat(full); err == nil {
		p.ReadOnly = append(p.ReadOnly, full)
		return
	} else if !errors.Is(err, os.ErrNotExist) {
		return
	}
	if mk && !slices.ContainsFunc(p.Make, func(m Placeholder) bool { return m.Path == full }) {
		p.Make = append(p.Make, Placeholder{Path: full, Dir: n.dir, Content: n.content})
	}
}

func isState(c agentConfig, name string) bool {
	for _, s := range c.state {
		if ok, _ := path.Match(s, name); ok {
			return true
		}
	}
	return false
}

// RealPath resolves the symlinks of the longest existing part of p (the
// rest does not exist yet, so it has none).
func RealPath(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for cur := p; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val // the last one wins, as for exec
		}
	}
	return v
}

func joinHome(home, dir string) string {
	if home == "" {
		return ""
	}
	return filepath.Join(home, dir)
}

// WithTargets adds to paths, for each that is a symlink, the path it leads
// to when that lies in one of grants (pinning a symlink keeps it from being
// replaced, not its target from being written); sorted, each once.
func WithTargets(paths, grants []string) []string {
	out := append([]string{}, paths...)
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		t, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		for _, g := range grants {
			if under(t, g) {
				out = append(out, t)
				break
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
