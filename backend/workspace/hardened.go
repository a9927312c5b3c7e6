package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// What a box wrote is data, never code (SPEC, threat model). git runs
// programs its configuration names: hooks, core.fsmonitor, filter and merge
// drivers, external diffs and textconv, signing programs, credential
// helpers. The engine runs git as the user on trees an agent wrote, so
// every git it runs gets:
//
//   - its git dir pinned to what Shepherd registered (--git-dir and
//     --work-tree, worktree.go): a .git file or folder in the tree is never
//     looked at, so a git dir an agent built (with its own config) is never
//     read;
//   - the fixed settings below: no hooks at all (also in the user's own
//     checkout: `git worktree add`, merge and branch run none), no
//     fsmonitor, no pager, no submodule walk (a submodule's .git file is in
//     the agent's tree), no transport, no automatic gc;
//   - no inherited GIT_* variable, no editor, askpass or terminal prompt
//     (gitEnviron);
//   - the commands named by any configuration file that is not the user's
//     own — the system's and the user's global files are; the repository's
//     own .git/config, a worktree's config and every file included from a
//     place an agent may write are not — replaced by what the user's own
//     files say, or by a neutral value (hardenConfig). The user's own
//     settings (identity, their global filter drivers such as git-lfs) are
//     kept;
//   - --no-ext-diff and --no-textconv on every diff (diff.go).

// hardening is the fixed -c settings of every git the engine runs.
var hardening = []string{
	"core.quotePath=off",
	"color.ui=false",
	// A file, not a folder: no hook is found there, whatever its name.
	"core.hooksPath=" + os.DevNull,
	"core.fsmonitor=false",
	"core.pager=cat",
	// A submodule's .git file is in the agent's tree: git would run in the
	// git dir it names. Submodules are never entered.
	"submodule.recurse=false",
	"diff.ignoreSubmodules=all",
	"status.submoduleSummary=false",
	// No transport at all (ext:: runs commands); nothing here fetches.
	"protocol.allow=never",
	// Nothing left running after the engine's git ends.
	"gc.auto=0",
	"maintenance.auto=false",
	"merge.autoStash=false",
}

// mergeFileDriver stands in for a merge driver that only an untrusted file
// defines: git's own three-way text merge, run by the system's git.
const mergeFileDriver = "git merge-file -L ours -L base -L theirs %A %O %B"

// neutral says whether the configuration key (section, subsection, name as
// git lists them: section and name in lower case) makes git run a
// program or read a file an agent could name, and what it is set to when
// only an untrusted file sets it; multi: the key is a list (an empty value
// resets it).
func neutral(section, sub, name string) (value string, multi, ok bool) {
	switch section {
	case "core":
		switch name {
		case "fsmonitor":
			return "false", false, true
		case "hookspath":
			return os.DevNull, false, true
		case "sshcommand", "askpass", "gitproxy", "alternaterefscommand":
			return "", false, true
		case "editor":
			return ":", false, true
		case "pager":
			return "cat", false, true
		case "excludesfile":
			return defaultConfigFile("ignore"), false, true
		case "attributesfile":
			return defaultConfigFile("attributes"), false, true
		}
	case "sequence":
		if name == "editor" {
			return ":", false, true
		}
	case "pager":
		return "false", false, true
	case "diff":
		if sub == "" && name == "external" || sub != "" && (name == "command" || name == "textconv") {
			return "", false, true
		}
	case "filter":
		switch name {
		case "clean", "smudge", "process":
			return "", false, true
		case "required":
			return "false", false, true
		}
	case "merge":
		if sub != "" && name == "driver" {
			return mergeFileDriver, false, true
		}
	case "gpg":
		switch {
		case sub == "" && name == "program", sub == "openpgp" && name == "program":
			return "gpg", false, true
		case sub == "x509" && name == "program":
			return "gpgsm", false, true
		case sub == "ssh" && name == "program":
			return "ssh-keygen", false, true
		case sub == "ssh" && name == "defaultkeycommand":
			return "", false, true
		}
	case "credential":
		if name == "helper" {
			return "", true, true
		}
	case "remote":
		switch name {
		case "uploadpack", "receivepack", "vcs":
			return "", false, true
		}
	case "uploadpack":
		if name == "packobjectshook" {
			return "", false, true
		}
	case "protocol":
		if name == "allow" {
			return "never", false, true
		}
	case "interactive":
		if name == "difffilter" {
			return "", false, true
		}
	case "difftool", "mergetool", "man", "browser":
		if name == "cmd" || name == "path" {
			return "", false, true
		}
	case "hook":
		// Hooks set in the configuration (newer git): off, like the others.
		if name == "command" {
			return ":", false, true
		}
	}
	return "", false, false
}

// defaultConfigFile is where git looks for its global file name when no
// configuration names one.
func defaultConfigFile(name string) string {
	base := os.Getenv("XDG_CONFIG_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "git", name)
}

// configEntry is one line of `git config --list --show-scope --show-origin -z`.
type configEntry struct {
	scope, origin, key, value string
	hasValue                  bool
}

// parseConfigList reads `git config --list --show-scope --show-origin -z`:
// per entry scope NUL origin NUL key [LF value] NUL.
func parseConfigList(b []byte) ([]configEntry, error) {
	fields := strings.Split(string(b), "\x00")
	if len(fields) > 0 && fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1]
	}
	if len(fields)%3 != 0 {
		return nil, fmt.Errorf("git config --list: %d fields, not scope/origin/entry triples", len(fields))
	}
	out := make([]configEntry, 0, len(fields)/3)
	for i := 0; i < len(fields); i += 3 {
		e := configEntry{scope: fields[i], origin: fields[i+1]}
		e.key, e.value, e.hasValue = strings.Cut(fields[i+2], "\n")
		if e.scope == "" || e.key == "" {
			return nil, fmt.Errorf("git config --list: entry %d has no scope or key", i/3)
		}
		out = append(out, e)
	}
	return out, nil
}

// splitKey splits section[.subsection].name; the subsection may hold dots.
func splitKey(key string) (section, sub, name string, ok bool) {
	i, j := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if i <= 0 || j == len(key)-1 {
		return "", "", "", false
	}
	section, name = strings.ToLower(key[:i]), strings.ToLower(key[j+1:])
	if j > i {
		sub = key[i+1 : j]
	}
	return section, sub, name, true
}

// trusted reports whether an entry comes from the user's own configuration:
// the system's or the user's global file (or a file they include) that is
// not inside a folder an agent may write. The repository's own config and a
// worktree's are not: git reads them from the repository, and a
// repository's config may include a file of its work tree.
func trusted(e configEntry, dir string, trees []string) bool {
	if e.scope != "system" && e.scope != "global" {
		return false
	}
	path, ok := strings.CutPrefix(e.origin, "file:")
	if !ok {
		return false
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	path = filepath.Clean(path)
	for _, t := range trees {
		if t != "" && within(path, t) {
			return false
		}
	}
	return true
}

// within reports whether path is dir or below it (both clean, also with
// symlinks resolved where they exist).
func within(path, dir string) bool {
	if inside(path, filepath.Clean(dir)) {
		return true
	}
	rp, err1 := filepath.EvalSymlinks(path)
	rd, err2 := filepath.EvalSymlinks(dir)
	return err1 == nil && err2 == nil && inside(rp, rd)
}

func inside(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// setting is one configuration key and the value git is given for it.
type setting struct{ key, value string }

// hardenConfig is the overrides for a configuration: each key that runs a
// program (neutral) and that an untrusted file sets is set again to what
// the trusted files say (the last of them, or all of them for a list), or
// to its neutral value.
func hardenConfig(entries []configEntry, dir string, trees []string) []setting {
	type keyState struct {
		section, sub, name string
		untrusted          bool
		trustedVals        []string
	}
	var order []string
	keys := map[string]*keyState{}
	for _, e := range entries {
		if e.scope == "command" {
			continue // the engine's own -c
		}
		section, sub, name, ok := splitKey(e.key)
		if !ok {
			continue
		}
		if _, _, isCmd := neutral(section, sub, name); !isCmd {
			continue
		}
		k := section + "." + sub + "." + name
		if sub == "" {
			k = section + "." + name
		}
		st := keys[k]
		if st == nil {
			st = &keyState{section: section, sub: sub, name: name}
			keys[k] = st
			order = append(order, k)
		}
		switch {
		case section == "hook":
			st.untrusted = true // no hook runs, whoever set it
		case trusted(e, dir, trees):
			st.trustedVals = append(st.trustedVals, e.value)
		default:
			st.untrusted = true
		}
	}
	var out []setting
	for _, k := range order {
		st := keys[k]
		if !st.untrusted {
			continue
		}
		val, multi, _ := neutral(st.section, st.sub, st.name)
		switch {
		case multi:
			out = append(out, setting{k, ""})
			for _, v := range st.trustedVals {
				out = append(out, setting{k, v})
			}
		case len(st.trustedVals) > 0 && st.section != "hook":
			out = append(out, setting{k, st.trustedVals[len(st.trustedVals)-1]})
		default:
			out = append(out, setting{k, val})
		}
	}
	return out
}

// overrides lists r's configuration (with r's pin, so that the files git
// reads are those of the registered repository) and hardens it.
func (r *repo) overrides(ctx context.Context) ([]setting, error) {
	out, err := runGit(ctx, r.dir, r.pin, nil, "config", "--list", "--show-scope", "--show-origin", "-z")
	if err != nil && exitCode(err) != 1 { // 1: no configuration at all
		return nil, fmt.Errorf("read git's configuration: %w", err)
	}
	entries, err := parseConfigList(out)
	if err != nil {
		return nil, err
	}
	return hardenConfig(entries, r.dir, r.trees), nil
}
