package permrules

import (
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// Call is what Claude Code sends its permission tool
// (`--permission-prompt-tool`): the tool, its input, and the call's id.
type Call struct {
	ToolName  string         `json:"tool_name"`
	Input     map[string]any `json:"input"`
	ToolUseID string         `json:"tool_use_id,omitempty"`
}

// AskUserQuestion is the tool by which the agent asks the user to choose;
// no rule ever answers it.
const AskUserQuestion = "AskUserQuestion"

// Context is where the agent runs; paths in calls and in rules are read
// against it.
type Context struct {
	Cwd  string // the agent's working folder: relative paths, `x` and `./x` patterns
	Root string // the project's root: `/x` patterns (Claude: the settings' folder); "" = Cwd
	Home string // `~/x` patterns and paths; "" = such rules match nothing
}

func (ctx Context) root() string {
	if ctx.Root != "" {
		return ctx.Root
	}
	return ctx.Cwd
}

// Matches reports whether r allows the call c.
func (r Rule) Matches(c Call, ctx Context) bool {
	_, ok := Match([]Rule{r}, c, ctx)
	return ok
}

// Match tells whether the rules allow the call c, and by which rules. A Bash
// command of several parts (a && b, a | b, a; b) is allowed when every part
// is, each by some rule — so Bash(safe:*) never approves `safe && other`.
// A question of the agent's (AskUserQuestion) is never matched: only the
// user answers it.
func Match(rules []Rule, c Call, ctx Context) ([]Rule, bool) {
	tool := c.ToolName
	if a, ok := aliases[tool]; ok {
		tool = a
	}
	if tool == "" || tool == AskUserQuestion {
		return nil, false
	}
	if tool == "Bash" {
		return matchBash(rules, c)
	}
	for _, r := range rules {
		if r.matchOther(tool, c, ctx) {
			return []Rule{r}, true
		}
	}
	return nil, false
}

func (r Rule) matchOther(tool string, c Call, ctx Context) bool {
	switch r.Kind {
	case KindTool:
		return r.covers(tool)
	case KindMCP:
		return matchMCP(r.Tool, tool)
	case KindPath:
		if !r.covers(tool) {
			return false
		}
		p, ok := callPath(tool, c, ctx)
		return ok && matchPath(r.Content, p, ctx)
	case KindDomain:
		if tool != "WebFetch" {
			return false
		}
		return matchDomain(strings.TrimPrefix(r.Content, "domain:"), str(c.Input, "url"))
	case KindSearch:
		return tool == "WebSearch" && str(c.Input, "query") == r.Content
	}
	return false
}

// covers: a rule of r.Tool speaks for calls of tool (a Read rule for every
// tool that reads files, an Edit rule for every one that edits them).
func (r Rule) covers(tool string) bool {
	switch r.Tool {
	case "Read":
		return contains(readTools, tool)
	case "Edit":
		return contains(editTools, tool)
	}
	return r.Tool == tool
}

func matchBash(rules []Rule, c Call) ([]Rule, bool) {
	for _, r := range rules {
		if r.Kind == KindTool && r.Tool == "Bash" {
			return []Rule{r}, true
		}
	}
	cmd := str(c.Input, "command")
	if strings.TrimSpace(cmd) == "" {
		return nil, false
	}
	parts, ok := splitCommand(cmd)
	if !ok || len(parts) == 0 {
		return nil, false
	}
	var used []Rule
	for _, p := range parts {
		found := false
		for _, r := range rules {
			if r.Tool == "Bash" && r.matchPart(p) {
				if !containsRule(used, r) {
					used = append(used, r)
				}
				found = true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return used, true
}

func containsRule(rs []Rule, r Rule) bool {
	for _, x := range rs {
		if x.String() == r.String() {
			return true
		}
	}
	return false
}

// matchPart: r allows the simple command p. A rule never approves a write
// to a file it does not name: an output redirection in p must be among the
// rule's own (prefix, exact and wildcard rules alike).
func (r Rule) matchPart(p simpleCommand) bool {
	switch r.Kind {
	case KindBashExact:
		return equalWords(p.words, p.ops, r.words, r.ops)
	case KindBashPrefix:
		n := len(r.words)
		if len(p.words) < n || !equalWords(p.words[:n], p.ops[:n], r.words, r.ops) {
			return false
		}
		return !hasOutput(p.words[n:], p.ops[n:])
	case KindBashWildcard:
		if !wildcard(r.Content).MatchString(p.text) {
			return false
		}
		for i := range p.words {
			if p.ops[i] && opWrites(p.words[i]) {
				if i+1 >= len(p.words) || !r.namesOutput(p.words[i], p.words[i+1]) {
					return false
				}
			}
		}
		return true
	}
	return false
}

// namesOutput: the rule itself writes target with op.
func (r Rule) namesOutput(op, target string) bool {
	for i := 0; i+1 < len(r.words); i++ {
		if r.ops[i] && r.words[i] == op && !r.ops[i+1] && r.words[i+1] == target {
			return true
		}
	}
	return false
}

// hasOutput: words hold an output redirection.
func hasOutput(words []string, ops []bool) bool {
	for i, w := range words {
		if ops[i] && opWrites(w) {
			return true
		}
	}
	return false
}

func equalWords(a []string, aops []bool, b []string, bops []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] || aops[i] != bops[i] {
			return false
		}
	}
	return true
}

// wildcard compiles a Bash wildcard rule the way Claude Code does: * is any
// text (spaces included), \* a literal star; a single trailing " *" is
// optional, so `git *` also matches `git` but never `gitk`.
func wildcard(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	stars := 0
	for i := 0; i < len(pattern); i++ {
		if pattern[i] == '*' && !escaped(pattern, i) {
			stars++
		}
	}
	optionalTail := stars == 1 && strings.HasSuffix(pattern, " *") && !escaped(pattern, len(pattern)-1)
	body := pattern
	if optionalTail {
		body = strings.TrimSuffix(pattern, " *")
	}
	lit := strings.Builder{}
	flush := func() {
		b.WriteString(regexp.QuoteMeta(lit.String()))
		lit.Reset()
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\\' && i+1 < len(body) && (body[i+1] == '*' || body[i+1] == '\\'):
			lit.WriteByte(body[i+1])
			i++
		case c == '*':
			flush()
			b.WriteString(`.*`)
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	if optionalTail {
		b.WriteString(`( .*)?`)
	}
	b.WriteString(`$`)
	return regexp.MustCompile(b.String())
}

func matchMCP(rule, tool string) bool {
	if !strings.HasPrefix(tool, "mcp__") {
		return false
	}
	rest := strings.TrimPrefix(rule, "mcp__")
	server, rtool, hasTool := strings.Cut(rest, "__")
	tserver, ttool, ok := strings.Cut(strings.TrimPrefix(tool, "mcp__"), "__")
	if !ok || tserver != server {
		return false
	}
	if !hasTool || rtool == "*" {
		return true
	}
	if strings.Contains(rtool, "*") {
		re := "^" + strings.ReplaceAll(regexp.QuoteMeta(rtool), `\*`, `.*`) + "$"
		return regexp.MustCompile(re).MatchString(ttool)
	}
	return rtool == ttool
}

func matchDomain(rule, raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	rule = strings.ToLower(rule)
	if sub, ok := strings.CutPrefix(rule, "*."); ok {
		return strings.HasSuffix(host, "."+sub)
	}
	return host == rule
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// callPath is the path a file tool's call names, absolute and clean.
func callPath(tool string, c Call, ctx Context) (string, bool) {
	var p string
	switch tool {
	case "NotebookEdit", "NotebookRead":
		p = str(c.Input, "notebook_path")
	case "Glob", "Grep", "LS":
		p = str(c.Input, "path")
		if p == "" {
			p = ctx.Cwd
		}
	default:
		p = str(c.Input, "file_path")
	}
	if p == "" || strings.ContainsRune(p, 0) {
		return "", false
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if ctx.Home == "" {
			return "", false
		}
		p = filepath.Join(ctx.Home, rest)
	}
	if !filepath.IsAbs(p) {
		if ctx.Cwd == "" {
			return "", false
		}
		p = filepath.Join(ctx.Cwd, p)
	}
	return filepath.Clean(p), true
}

// patternOf reads a path rule's pattern the way Claude Code does: `//x` is
// the absolute /x, `~/x` is in the home folder, `/x` is in the project's
// root, and `x` or `./x` in the working folder. It returns the pattern's
// folder and the pattern, relative to it, with a trailing "/" kept (a
// folder only).
func patternOf(c string, ctx Context) (base, pat string, ok bool) {
	switch {
	case strings.HasPrefix(c, "//"):
		return "/", c[2:], true
	case strings.HasPrefix(c, "~/"):
		return ctx.Home, c[2:], ctx.Home != ""
	case c == "~":
		return ctx.Home, "", ctx.Home != ""
	case strings.HasPrefix(c, "/"):
		return ctx.root(), c[1:], ctx.root() != ""
	case strings.HasPrefix(c, "./"):
		return ctx.Cwd, c[2:], ctx.Cwd != ""
	}
	return ctx.Cwd, c, ctx.Cwd != ""
}

// matchPath: the file p is matched by the gitignore-style pattern: * is any
// text but /, ** any number of folders, ? one character, [abc] a set; a
// pattern matching a folder matches everything in it; a trailing / matches
// folders only. Symlinks are followed: p matches only if where it really
// is matches too.
func matchPath(pattern, p string, ctx Context) bool {
	base, pat, ok := patternOf(pattern, ctx)
	if !ok || pat == "" {
		return false
	}
	if !matchUnder(base, pat, p) {
		return false
	}
	realBase, realP := resolve(base), resolve(p)
	if realBase == base && realP == p {
		return true
	}
	return matchUnder(realBase, pat, realP)
}

func matchUnder(base, pat, p string) bool {
	rel, err := filepath.Rel(base, p)
	if err != nil || rel == "." {
		return false
	}
	segs := strings.Split(filepath.ToSlash(rel), "/")
	dirOnly := strings.HasSuffix(pat, "/")
	ps := patSegs(strings.TrimSuffix(pat, "/"))
	if !dirOnly && globSegs(ps, segs) {
		return true
	}
	// What a pattern matches as a folder, it matches everything in.
	if ps[len(ps)-1] != "**" {
		ps = append(ps, "**")
	}
	return globSegs(ps, segs)
}

// patSegs splits a pattern into its folders, runs of ** made one.
func patSegs(pat string) []string {
	var out []string
	for _, s := range strings.Split(pat, "/") {
		if s == "" {
			continue
		}
		if s == "**" && len(out) > 0 && out[len(out)-1] == "**" {
			continue
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		out = []string{"**"}
	}
	return out
}

// globSegs matches path segments against pattern segments; ** is any
// number of segments (at least one at the end of the pattern). Dynamic
// programming: no pattern makes it slow.
func globSegs(pat, segs []string) bool {
	n, m := len(pat), len(segs)
	// ok[i][j]: pat[i:] matches segs[j:].
	ok := make([][]bool, n+1)
	for i := range ok {
		ok[i] = make([]bool, m+1)
	}
	ok[n][m] = true
	for i := n - 1; i >= 0; i-- {
		for j := m; j >= 0; j-- {
			if pat[i] == "**" {
				if i == n-1 {
					ok[i][j] = j < m && segs[j] != ".."
					continue
				}
				// zero segments, or one more (never a way out: "..")
				ok[i][j] = ok[i+1][j] || j < m && segs[j] != ".." && ok[i][j+1]
				continue
			}
			if j == m {
				continue
			}
			if segs[j] == ".." && pat[i] != ".." {
				continue // only a pattern that says ".." leaves its folder
			}
			if hit, _ := path.Match(pat[i], segs[j]); hit {
				ok[i][j] = ok[i+1][j+1]
			}
		}
	}
	return ok[0][0]
}

// resolve follows the symlinks of the longest existing part of p.
func resolve(p string) string {
	rest := ""
	cur := p
	for {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			if rest == "" {
				return real
			}
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
