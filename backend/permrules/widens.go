package permrules

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"shepherd/backend/sandbox"
)

// ErrWidens is the kind of Widens' refusals.
var ErrWidens = errors.New("the rule would widen the sandbox")

// Programs a rule may name, by what they do.
var (
	// netPrograms reach the network whatever their arguments.
	netPrograms = set("curl", "wget", "ssh", "scp", "sftp", "nc", "ncat", "netcat", "telnet", "ftp", "ping",
		"dig", "nslookup", "host", "http", "https", "aria2c", "gh", "npx", "pnpx", "bunx", "socat")
	// netSubcommands: a program that reaches the network with one of
	// these first arguments (git push, npm install, …).
	netSubcommands = map[string]map[string]bool{
		"git":     set("push", "pull", "fetch", "clone", "ls-remote", "remote", "submodule", "send-email"),
		"npm":     set("install", "i", "ci", "add", "publish", "update", "upgrade", "exec", "view", "info", "login", "audit", "outdated"),
		"pnpm":    set("install", "i", "add", "publish", "update", "up", "dlx", "exec", "fetch"),
		"yarn":    set("install", "add", "publish", "upgrade", "up", "dlx", "npm"),
		"bun":     set("install", "i", "add", "update", "x", "publish"),
		"pip":     set("install", "download", "search"),
		"pip3":    set("install", "download", "search"),
		"uv":      set("pip", "add", "sync", "lock", "tool"),
		"cargo":   set("install", "fetch", "publish", "update", "add", "search"),
		"go":      set("get", "install", "mod"),
		"gem":     set("install", "push", "update", "fetch"),
		"docker":  set("pull", "push", "login", "search"),
		"podman":  set("pull", "push", "login", "search"),
		"brew":    set("install", "update", "upgrade", "fetch"),
		"apt":     set("install", "update", "upgrade", "download"),
		"apt-get": set("install", "update", "upgrade", "download"),
	}
	// writePrograms write the files their arguments name.
	writePrograms = set("rm", "rmdir", "mv", "cp", "mkdir", "touch", "chmod", "chown", "chgrp", "ln", "tee",
		"dd", "install", "truncate", "shred", "unlink", "rsync", "patch", "mkfifo", "mknod", "setfattr", "chattr")
	// anyCode programs run whatever their arguments say: open, they are a
	// bare Bash.
	anyCode = set("sh", "bash", "zsh", "dash", "ksh", "fish", "eval", "su", "script",
		"python", "python3", "python2", "node", "deno", "bun", "perl", "ruby", "php", "lua", "awk", "gawk",
		"find", "make", "just", "npm", "pnpm", "yarn", "npx", "osascript", "unshare", "nsenter", "chroot", "git")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Widens tells whether allowing the rule r always would let a sandboxed
// agent with grants g do what g does not grant (SPEC "Answers": a
// sandboxed agent's rules never widen its grants). nil means it does not;
// otherwise the error wraps ErrWidens and says why, naming what is beyond
// the grants. Reads are allowed everywhere, so Read rules never widen.
//
// It judges what a rule names — the sandbox still enforces whatever runs:
// an Edit or Write rule must stay inside the write grants; WebFetch and
// WebSearch need @network; a Bash rule must not allow every command, a
// program that runs any code with open arguments (sh, python, env, xargs,
// …), a network program without @network (curl, git push, npm install,
// …), or a program that writes (rm, mv, cp, tee, …) where the paths it
// names, or may name, are outside the write grants.
func Widens(r Rule, g sandbox.Grants, ctx Context) error {
	switch {
	case r.Kind == KindMCP:
		// An MCP tool acts through its server, which checks its caller
		// (Shepherd's does) or runs in the box with the agent.
		return nil
	case r.Tool == "Bash":
		return widensBash(r, g, ctx)
	case r.Tool == "WebFetch" || r.Tool == "WebSearch":
		if !g.Network {
			return fmt.Errorf("%w: %s reaches the network, and the agent has no @network", ErrWidens, r)
		}
		return nil
	case contains(editTools, r.Tool):
		return widensEdit(r, g, ctx)
	}
	return nil
}

func widensEdit(r Rule, g sandbox.Grants, ctx Context) error {
	if r.Kind == KindTool {
		if writable("/", g) {
			return nil
		}
		return fmt.Errorf("%w: %s allows writing any file, and the agent may write only in %s", ErrWidens, r, writeList(g))
	}
	base, pat, ok := patternOf(r.Content, ctx)
	if !ok {
		return fmt.Errorf("%w: %s names a folder this agent has no way to read (no home folder)", ErrWidens, r)
	}
	// The folder the pattern is fixed to: its segments up to the first
	// with a wildcard.
	dir := base
	for _, seg := range strings.Split(strings.TrimSuffix(pat, "/"), "/") {
		if seg == "" {
			continue
		}
		if strings.ContainsAny(seg, "*?[") {
			break
		}
		dir = filepath.Join(dir, seg)
	}
	if where, out := outside(filepath.Clean(dir), g); out {
		return fmt.Errorf("%w: %s allows writing in %s, outside the agent's write grants (%s)", ErrWidens, r, where, writeList(g))
	}
	return nil
}

// outside: p, or where it really is (symlinks followed), is outside g's
// write grants; where says which, in words.
func outside(p string, g sandbox.Grants) (where string, out bool) {
	if !writable(p, g) {
		return p, true
	}
	if real := resolve(p); !writable(real, g) {
		return p + ", which is " + real, true
	}
	return "", false
}

func widensBash(r Rule, g sandbox.Grants, ctx Context) error {
	everything := fmt.Errorf("%w: %s allows every command, which may write outside the agent's write grants (%s)%s", ErrWidens, r, writeList(g), netNote(g))
	if r.Kind == KindTool {
		return everything
	}
	// The rule's fixed words, and whether more may follow.
	words, ops, open := r.words, r.ops, r.Kind == KindBashPrefix
	if r.Kind == KindBashWildcard {
		lit := r.Content[:firstStar(r.Content)]
		open = true
		if lit == "" || !strings.HasSuffix(lit, " ") && !strings.Contains(strings.TrimSpace(lit), " ") {
			// `*`, `np*`: the program itself is open.
			return everything
		}
		cmds, ok := splitCommand(strings.TrimSpace(lit))
		if !ok || len(cmds) != 1 {
			return everything
		}
		words, ops = cmds[0].words, cmds[0].ops
		if !strings.HasSuffix(lit, " ") && len(words) > 0 {
			// The last word goes on into the wildcard.
			words, ops = words[:len(words)-1], ops[:len(ops)-1]
		}
		if len(words) == 0 {
			return everything
		}
	}
	for len(words) > 0 && isAssignment(words[0]) && !ops[0] {
		words, ops = words[1:], ops[1:]
	}
	if len(words) == 0 {
		return everything
	}
	prog, args := filepath.Base(words[0]), words[1:]
	// A wrapper (sudo, env, timeout 5, xargs, …) runs the program after it.
	for wrappers[prog] {
		rest := unwrap(prog, args)
		if len(rest) == 0 {
			if open {
				return fmt.Errorf("%w: %s lets %s run any command, which may write outside the agent's write grants (%s)%s", ErrWidens, r, prog, writeList(g), netNote(g))
			}
			break
		}
		prog, args = filepath.Base(rest[0]), rest[1:]
	}
	if open && anyCode[prog] && !hasOperand(args) {
		return fmt.Errorf("%w: %s lets %s run any code, which may write outside the agent's write grants (%s)%s", ErrWidens, r, prog, writeList(g), netNote(g))
	}
	if !g.Network {
		if netPrograms[prog] {
			return fmt.Errorf("%w: %s reaches the network, and the agent has no @network", ErrWidens, r)
		}
		if subs, ok := netSubcommands[prog]; ok {
			sub := firstOperand(args)
			if sub == "" && open || subs[sub] {
				what := prog
				if sub != "" {
					what += " " + sub
				}
				return fmt.Errorf("%w: %s allows %s, which reaches the network, and the agent has no @network", ErrWidens, r, what)
			}
		}
	}
	// Output redirections the rule names (in a wildcard rule, all of them:
	// its text after the star too).
	rwords, rops := words, ops
	if r.Kind == KindBashWildcard {
		rwords, rops = r.words, r.ops
	}
	for i, w := range rwords {
		if rops[i] && opWrites(w) && i+1 < len(rwords) {
			target := rwords[i+1]
			if strings.Contains(target, "*") && r.Kind == KindBashWildcard {
				return fmt.Errorf("%w: %s writes wherever its wildcard says, also outside the agent's write grants (%s)", ErrWidens, r, writeList(g))
			}
			if where, out := outside(absPath(target, ctx), g); out {
				return fmt.Errorf("%w: %s writes %s, outside the agent's write grants (%s)", ErrWidens, r, where, writeList(g))
			}
		}
	}
	if !writes(prog, args) {
		return nil
	}
	if open {
		return fmt.Errorf("%w: %s lets %s write wherever its further arguments say, also outside the agent's write grants (%s)", ErrWidens, r, prog, writeList(g))
	}
	aops := ops[len(ops)-len(args):] // args end words (also after a wrapper)
	for i, a := range args {
		if strings.HasPrefix(a, "-") && a != "-" || aops[i] || i > 0 && aops[i-1] {
			continue // an option, or a redirection (checked above)
		}
		if v, ok := strings.CutPrefix(a, "of="); ok && prog == "dd" {
			a = v
		} else if prog == "dd" {
			continue
		}
		if where, out := outside(absPath(a, ctx), g); out {
			return fmt.Errorf("%w: %s lets %s write %s, outside the agent's write grants (%s)", ErrWidens, r, prog, where, writeList(g))
		}
	}
	return nil
}

// writes: the program writes the files its arguments name.
func writes(prog string, args []string) bool {
	if writePrograms[prog] {
		return true
	}
	if prog == "sed" || prog == "perl" {
		for _, a := range args {
			if strings.HasPrefix(a, "-i") || a == "--in-place" || strings.HasPrefix(a, "--in-place=") {
				return true
			}
		}
	}
	return false
}

func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// wrappers run the command that follows their options.
var wrappers = set("sudo", "doas", "env", "command", "builtin", "exec", "nohup", "timeout", "nice", "ionice",
	"time", "stdbuf", "setsid", "xargs", "watch", "flock", "chrt", "taskset", "caffeinate")

// unwrap returns the command a wrapper runs: after its options, variable
// assignments, numbers and durations (and flock's lock file).
func unwrap(prog string, args []string) []string {
	skippedFile := prog != "flock"
	for len(args) > 0 {
		a := args[0]
		switch {
		case strings.HasPrefix(a, "-"), isAssignment(a), isNumberish(a):
		case !skippedFile:
			skippedFile = true
		default:
			return args
		}
		args = args[1:]
	}
	return nil
}

// isNumberish: 5, 10s, 0.5m, 0x3 (timeout's duration, nice's level,
// taskset's mask).
func isNumberish(s string) bool {
	s = strings.TrimRight(s, "smhd")
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c == '.' || c == 'x' || c == 'X' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return s[0] >= '0' && s[0] <= '9'
}

func firstStar(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '*' && !escaped(s, i) {
			return i
		}
	}
	return len(s)
}

// hasOperand: some word is not an option (a script, a file, a target).
func hasOperand(args []string) bool { return firstOperand(args) != "" }

func firstOperand(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

func absPath(p string, ctx Context) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok && ctx.Home != "" {
		return filepath.Join(ctx.Home, rest)
	}
	if p == "~" && ctx.Home != "" {
		return ctx.Home
	}
	if !filepath.IsAbs(p) {
		return filepath.Join(ctx.Cwd, p)
	}
	return filepath.Clean(p)
}

// writable: p is in one of g's write grants.
func writable(p string, g sandbox.Grants) bool {
	for _, d := range g.WriteDirs {
		if d == "/" || p == d || strings.HasPrefix(p, d+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

func writeList(g sandbox.Grants) string {
	if len(g.WriteDirs) == 0 {
		return "none"
	}
	return strings.Join(g.WriteDirs, ", ")
}

func netNote(g sandbox.Grants) string {
	if g.Network {
		return ""
	}
	return " or reach the network (the agent has no @network)"
}
