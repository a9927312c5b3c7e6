// Package permrules reads permission rules written in Claude Code's own
// syntax — `Bash`, `Bash(npm test:*)`, `Bash(git diff)`, `Read(./src/**)`,
// `Edit(//abs/path/**)`, `WebFetch(domain:example.com)`, `mcp__server__tool`
// — and matches a permission-tool call ({tool_name, input}) against a list
// of them (SPEC "Attention", part "Answers": "always allow" keeps such a
// rule per agent or per project). It also tells whether a rule would widen a
// sandboxed agent's grants (Widens), which such an agent's rules never may.
//
// The syntax and its validation follow Claude Code's (checked against the
// CLI from npm, 2.1.197): `Tool` or `Tool(content)`; `\(`, `\)` and `\\`
// escape inside the content; `Tool()` is an error and `Tool(*)` is `Tool`;
// tool names start upper-case unless they hold an underscore (MCP tools);
// the aliases Task→Agent, KillShell/KillBash→TaskStop and
// BashOutput→TaskOutput are applied. Matching is never looser than Claude
// Code's: where a command cannot be read safely, no rule but a bare `Bash`
// matches it, and the user is asked.
package permrules

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// ErrInvalid is the kind of every error of Parse; the message says what is
// wrong with the rule and, where it helps, what to write instead.
var ErrInvalid = errors.New("invalid permission rule")

// Kind says how a rule matches.
type Kind string

const (
	KindTool         Kind = "tool"          // every use of the tool: `Bash`, `Read`, `mcp__s__t`
	KindBashExact    Kind = "bash-exact"    // `Bash(git diff)`: that command exactly
	KindBashPrefix   Kind = "bash-prefix"   // `Bash(npm test:*)`: the command and any further words
	KindBashWildcard Kind = "bash-wildcard" // `Bash(npm run * --watch)`: * is any text
	KindPath         Kind = "path"          // `Read(src/**)`, `Edit(//etc/hosts)`: a gitignore-style path pattern
	KindDomain       Kind = "domain"        // `WebFetch(domain:example.com)`, `WebFetch(domain:*.example.com)`
	KindSearch       Kind = "search"        // `WebSearch(claude ai)`: that query
	KindMCP          Kind = "mcp"           // `mcp__server`, `mcp__server__*`, `mcp__server__get_*`
)

// Rule is one parsed permission rule.
type Rule struct {
	Tool    string // the tool's name, aliases resolved (for MCP rules the whole name)
	Content string // what is in the parentheses, unescaped; "" when none
	Kind    Kind

	words  []string // Bash: the command's words (for a wildcard rule, with its stars as they are)
	ops    []bool   // which of words are redirection operators
	prefix bool     // Bash: a legacy `prefix:*` rule
}

// aliases are the old tool names Claude Code still reads.
var aliases = map[string]string{
	"Task": "Agent", "KillShell": "TaskStop", "KillBash": "TaskStop",
	"AgentOutputTool": "TaskOutput", "BashOutputTool": "TaskOutput", "AgentOutput": "TaskOutput", "BashOutput": "TaskOutput",
}

// Tool families for path rules: which calls a rule of a tool covers.
var (
	// readTools are covered by a Read rule (Claude applies Read rules to
	// every built-in tool that reads files).
	readTools = []string{"Read", "Glob", "Grep", "LS", "NotebookRead"}
	// editTools are covered by an Edit rule ("Edit rules apply to all
	// built-in tools that edit files").
	editTools = []string{"Edit", "MultiEdit", "Write", "NotebookEdit"}
	// pathTools may have a path pattern; each covers itself, Read and Edit
	// their families.
	pathTools = []string{"Read", "Edit", "Write", "MultiEdit", "Glob", "Grep", "LS", "NotebookRead", "NotebookEdit"}
)

// MaxLen is the longest rule Parse takes, in bytes.
const MaxLen = 4096

// Parse reads one rule. Every error wraps ErrInvalid and names the rule.
func Parse(s string) (Rule, error) {
	r, err := parse(s)
	if err != nil {
		return Rule{}, fmt.Errorf("%w %q: %s", ErrInvalid, s, err.Error())
	}
	return r, nil
}

// ParseAll parses every rule; the first error stops it.
func ParseAll(ss []string) ([]Rule, error) {
	out := make([]Rule, 0, len(ss))
	for _, s := range ss {
		r, err := Parse(s)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// MustParse is Parse for rules known to be valid (tests, constants).
func MustParse(s string) Rule {
	r, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return r
}

type ruleError string

func (e ruleError) Error() string { return string(e) }

func errorf(format string, a ...any) error { return ruleError(fmt.Sprintf(format, a...)) }

func parse(s string) (Rule, error) {
	switch {
	case strings.TrimSpace(s) == "":
		return Rule{}, errorf("a rule cannot be empty (write a tool name, e.g. Bash or Bash(npm test:*))")
	case len(s) > MaxLen:
		return Rule{}, errorf("longer than %d bytes", MaxLen)
	case s != strings.TrimSpace(s):
		return Rule{}, errorf("spaces around the rule (write it without them)")
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return Rule{}, errorf("a control character (%U) in the rule", c)
		}
	}
	if count(s, '(') != count(s, ')') {
		return Rule{}, errorf("mismatched parentheses (escape a literal one as \\( or \\))")
	}
	name, content, hasParens := split(s)
	if hasParens && content == "" {
		if name == "" {
			return Rule{}, errorf("empty parentheses with no tool name")
		}
		return Rule{}, errorf("empty parentheses (write %s alone, or %s(some-pattern))", name, name)
	}
	if name == "" {
		return Rule{}, errorf("the tool name is missing before the parentheses")
	}
	if a, ok := aliases[name]; ok {
		name = a
	}
	if content == "*" {
		content = ""
	}
	if name == AskUserQuestion {
		return Rule{}, errorf("the agent's questions are answered by the user, never by a rule")
	}
	if strings.HasPrefix(name, "mcp__") {
		return parseMCP(name, hasParens)
	}
	if strings.Contains(name, "*") {
		return Rule{}, errorf("a wildcard in the tool name %q (an allow rule must name the tool; only MCP tools take one, after mcp__<server>__)", name)
	}
	if !strings.Contains(name, "_") && (name[0] < 'A' || name[0] > 'Z') {
		return Rule{}, errorf("tool names start with an upper-case letter (write %q)", strings.ToUpper(name[:1])+name[1:])
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return Rule{}, errorf("the tool name %q has %q, which no tool name has", name, c)
		}
	}
	r := Rule{Tool: name, Content: content, Kind: KindTool}
	if content == "" {
		return r, nil
	}
	switch {
	case name == "Bash":
		return parseBash(r)
	case contains(pathTools, name):
		return parsePath(r)
	case name == "WebFetch":
		return parseDomain(r)
	case name == "WebSearch":
		if strings.ContainsAny(content, "*?") {
			return Rule{}, errorf("WebSearch does not take wildcards (write the exact search terms)")
		}
		r.Kind = KindSearch
		return r, nil
	}
	return Rule{}, errorf("Shepherd matches no pattern for %s (write %s alone for every use of it)", name, name)
}

// split cuts a rule into its tool name and the content of its parentheses,
// as Claude Code does: the first unescaped "(" and the last unescaped ")",
// which must end the rule; otherwise the whole rule is a tool name.
func split(s string) (name, content string, parens bool) {
	open := -1
	for i := 0; i < len(s); i++ {
		if s[i] == '(' && !escaped(s, i) {
			open = i
			break
		}
	}
	closing := -1
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ')' && !escaped(s, i) {
			closing = i
			break
		}
	}
	if open < 0 || closing < 0 || closing <= open || closing != len(s)-1 {
		return s, "", false
	}
	return s[:open], unescape(s[open+1 : closing]), true
}

// escaped: s[i] follows an odd number of backslashes.
func escaped(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// count counts the unescaped c in s.
func count(s string, c byte) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == c && !escaped(s, i) {
			n++
		}
	}
	return n
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	return strings.NewReplacer(`\(`, "(", `\)`, ")", `\\`, `\`).Replace(s)
}

func escapeContent(s string) string {
	return strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s)
}

// String is the rule in Claude Code's syntax; Parse(r.String()) is r.
func (r Rule) String() string {
	if r.Content == "" {
		return r.Tool
	}
	return r.Tool + "(" + escapeContent(r.Content) + ")"
}

func parseMCP(name string, parens bool) (Rule, error) {
	if parens {
		return Rule{}, errorf("MCP rules take no pattern in parentheses (write %s, or mcp__<server>__* for every tool of a server)", name)
	}
	rest := strings.TrimPrefix(name, "mcp__")
	server, tool, _ := strings.Cut(rest, "__")
	if server == "" {
		return Rule{}, errorf("the MCP server's name is missing (write mcp__<server> or mcp__<server>__<tool>)")
	}
	if strings.Contains(server, "*") {
		return Rule{}, errorf("a wildcard in the MCP server's name (name the server: mcp__<server>__*)")
	}
	for _, part := range []string{server, tool} {
		for _, c := range part {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '*' || c == '.') {
				return Rule{}, errorf("%q has %q, which no MCP tool name has", name, c)
			}
		}
	}
	return Rule{Tool: name, Kind: KindMCP}, nil
}

func parseBash(r Rule) (Rule, error) {
	c := r.Content
	if strings.Contains(c, ":*") && !strings.HasSuffix(c, ":*") {
		return Rule{}, errorf("the :* pattern must be at the end (Bash(npm run:*) matches npm run and what follows; use * for a wildcard elsewhere)")
	}
	if c == ":*" {
		return Rule{}, errorf("the command before :* is missing (e.g. Bash(npm test:*))")
	}
	body := c
	if strings.HasSuffix(c, ":*") {
		body = strings.TrimSuffix(c, ":*")
		r.prefix = true
	}
	cmds, ok := splitCommand(body)
	switch {
	case !ok:
		return Rule{}, errorf("the command cannot be read: %s", lexProblem(body))
	case len(cmds) != 1:
		return Rule{}, errorf("a rule names one command: it cannot hold ;, &&, ||, | or & (write one rule per command)")
	case len(cmds[0].words) == 0:
		return Rule{}, errorf("the command is empty")
	}
	r.words, r.ops = cmds[0].words, cmds[0].ops
	switch {
	case r.prefix:
		if hasUnescapedStar(body) {
			return Rule{}, errorf("both :* and * in one rule (use Bash(npm run:*) or Bash(npm run *))")
		}
		r.Kind = KindBashPrefix
	case hasUnescapedStar(c):
		r.Kind = KindBashWildcard
	default:
		r.Kind = KindBashExact
	}
	return r, nil
}

func parsePath(r Rule) (Rule, error) {
	c := r.Content
	if strings.Contains(c, ":*") {
		return Rule{}, errorf("the :* syntax is only for Bash prefix rules (use glob patterns: %s(*.ts), %s(src/**))", r.Tool, r.Tool)
	}
	_, p, _ := patternOf(c, Context{Cwd: "/", Root: "/", Home: "/"})
	if strings.Trim(p, "/") == "" {
		// "//", "~/", "/" and "./" name a whole folder: say it with **.
		return Rule{}, errorf("the pattern names a folder but no files in it (write %s/** for everything in it)", strings.TrimSuffix(c, "/"))
	}
	for _, seg := range strings.Split(strings.Trim(p, "/"), "/") {
		if seg == "**" {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return Rule{}, errorf("the pattern %q is malformed (an unclosed [ or a trailing \\)", seg)
		}
	}
	r.Kind = KindPath
	return r, nil
}

func parseDomain(r Rule) (Rule, error) {
	c := r.Content
	if strings.Contains(c, "://") || strings.HasPrefix(c, "http") {
		return Rule{}, errorf("WebFetch rules name a domain, not a URL (write WebFetch(domain:example.com))")
	}
	d, ok := strings.CutPrefix(c, "domain:")
	if !ok {
		return Rule{}, errorf(`WebFetch rules start with "domain:" (write WebFetch(domain:example.com) or WebFetch(domain:*.example.com))`)
	}
	host := strings.TrimPrefix(d, "*.")
	if host == "" || strings.ContainsAny(host, "*/?#@: ") {
		return Rule{}, errorf("%q is not a domain (write domain:example.com, or domain:*.example.com for its subdomains)", d)
	}
	r.Kind = KindDomain
	return r, nil
}

func hasUnescapedStar(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '*' && !escaped(s, i) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
