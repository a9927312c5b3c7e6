package permrules

import (
	"errors"
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	for _, tc := range []struct {
		in      string
		tool    string
		content string
		kind    Kind
		str     string // String(), if not in
	}{
		{in: "Bash", tool: "Bash", kind: KindTool},
		{in: "Bash(*)", tool: "Bash", kind: KindTool, str: "Bash"},
		{in: "Bash(npm test:*)", tool: "Bash", content: "npm test:*", kind: KindBashPrefix},
		{in: "Bash(git diff)", tool: "Bash", content: "git diff", kind: KindBashExact},
		{in: "Bash(npm run * --watch)", tool: "Bash", content: "npm run * --watch", kind: KindBashWildcard},
		{in: `Bash(echo \\*)`, tool: "Bash", content: `echo \*`, kind: KindBashExact},
		{in: `Bash(echo '\(hi\)')`, tool: "Bash", content: `echo '(hi)'`, kind: KindBashExact},
		{in: "Read(./src/**)", tool: "Read", content: "./src/**", kind: KindPath},
		{in: "Edit(//abs/path/**)", tool: "Edit", content: "//abs/path/**", kind: KindPath},
		{in: "Write(/docs/*.md)", tool: "Write", content: "/docs/*.md", kind: KindPath},
		{in: "Read(~/.zshrc)", tool: "Read", content: "~/.zshrc", kind: KindPath},
		{in: "Edit(*.env)", tool: "Edit", content: "*.env", kind: KindPath},
		{in: "WebFetch(domain:example.com)", tool: "WebFetch", content: "domain:example.com", kind: KindDomain},
		{in: "WebFetch(domain:*.google.com)", tool: "WebFetch", content: "domain:*.google.com", kind: KindDomain},
		{in: "WebSearch(claude ai)", tool: "WebSearch", content: "claude ai", kind: KindSearch},
		{in: "mcp__github__create_issue", tool: "mcp__github__create_issue", kind: KindMCP},
		{in: "mcp__github", tool: "mcp__github", kind: KindMCP},
		{in: "mcp__github__*", tool: "mcp__github__*", kind: KindMCP},
		{in: "mcp__github__get_*", tool: "mcp__github__get_*", kind: KindMCP},
		{in: "Task", tool: "Agent", kind: KindTool, str: "Agent"},
		{in: "KillShell", tool: "TaskStop", kind: KindTool, str: "TaskStop"},
		{in: "WebFetch", tool: "WebFetch", kind: KindTool},
		{in: "TodoWrite", tool: "TodoWrite", kind: KindTool},
	} {
		t.Run(tc.in, func(t *testing.T) {
			r, err := Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if r.Tool != tc.tool || r.Content != tc.content || r.Kind != tc.kind {
				t.Fatalf("got tool %q content %q kind %q", r.Tool, r.Content, r.Kind)
			}
			want := tc.str
			if want == "" {
				want = tc.in
			}
			if r.String() != want {
				t.Fatalf("String() = %q, want %q", r.String(), want)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	for _, tc := range []struct{ in, says string }{
		{"", "cannot be empty"},
		{"   ", "cannot be empty"},
		{" Bash", "spaces around"},
		{"Bash(npm test", "mismatched parentheses"},
		{"Bash()", "empty parentheses (write Bash alone"},
		{"()", "empty parentheses with no tool name"},
		{"(ls)", "tool name is missing"},
		{"bash", `upper-case letter (write "Bash")`},
		{"Ba sh", "which no tool name has"},
		{"Bash\n", "spaces around"},
		{"Bash(ls\x00)", "control character"},
		{"Bash(npm:*test)", "the :* pattern must be at the end"},
		{"Bash(:*)", "the command before :* is missing"},
		{"Bash(npm * run:*)", "both :* and *"},
		{"Bash(npm test && rm -rf /)", "a rule names one command"},
		{"Bash(a; b)", "a rule names one command"},
		{"Bash(echo $(id))", "command substitution"},
		{"Bash(echo `id`)", "command substitution"},
		{"Bash(cat <(ls))", "process substitution"},
		{"Bash(cat <<EOF)", "here document"},
		{"Bash(echo 'open)", "unclosed quote"},
		{"Read(src:*)", "the :* syntax is only for Bash"},
		{"Edit(src/[a)", "malformed"},
		{"Read(//)", "names a folder but no files"},
		{"Edit(./)", "names a folder but no files"},
		{"WebFetch(https://example.com)", "domain, not a URL"},
		{"WebFetch(example.com)", `start with "domain:"`},
		{"WebFetch(domain:)", "is not a domain"},
		{"WebFetch(domain:a.com/x)", "is not a domain"},
		{"WebSearch(claude*)", "does not take wildcards"},
		{"mcp__github__tool(x)", "MCP rules take no pattern"},
		{"mcp__", "server's name is missing"},
		{"mcp__*__x", "wildcard in the MCP server's name"},
		{"Bash*", "wildcard in the tool name"},
		{"*", "wildcard in the tool name"},
		{"Agent(Explore)", "Shepherd matches no pattern for Agent"},
		{"AskUserQuestion", "answered by the user"},
		{"Bash(" + strings.Repeat("a", MaxLen) + ")", "longer than"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := Parse(tc.in)
			if err == nil {
				t.Fatalf("accepted")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("not ErrInvalid: %v", err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %q does not say %q", err, tc.says)
			}
			if !strings.Contains(err.Error(), "invalid permission rule") {
				t.Fatalf("error %q does not name what it is", err)
			}
		})
	}
}

func TestParseAll(t *testing.T) {
	rs, err := ParseAll([]string{"Bash(ls)", "Read"})
	if err != nil || len(rs) != 2 {
		t.Fatal(rs, err)
	}
	if _, err := ParseAll([]string{"Bash(ls)", "bash"}); err == nil || !strings.Contains(err.Error(), `"bash"`) {
		t.Fatalf("the bad rule is not named: %v", err)
	}
}
