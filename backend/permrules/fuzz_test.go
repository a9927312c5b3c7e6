package permrules

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

var fuzzRules = []string{
	"Bash", "Bash(npm test:*)", "Bash(git diff)", "Bash(ls *)", `Bash(echo \*)`, "Bash(npm run * --watch)",
	"Read(./src/**)", "Edit(//abs/path/**)", "Write(/docs/*.md)", "Read(~/.zshrc)", "Edit(src/[a-c]?.go)",
	"WebFetch(domain:*.example.com)", "WebSearch(x y)", "mcp__s__get_*", "mcp__s", "Task", "Bash()", "Bash(a; b)",
	"bash", "Bash(npm:*x)", "((", `Bash(\(\))`, "Read(../**/x)", "Edit(**)", "Bash(a 'b)", "mcp__a__b(c)",
}

// Parse never panics; what it accepts prints back to itself.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzRules {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q: error not ErrInvalid: %v", s, err)
			}
			return
		}
		again, err := Parse(r.String())
		if err != nil {
			t.Fatalf("%q prints as %q, which does not parse: %v", s, r.String(), err)
		}
		if again.Tool != r.Tool || again.Content != r.Content || again.Kind != r.Kind {
			t.Fatalf("%q → %q → %+v, want %+v", s, r.String(), again, r)
		}
	})
}

// Matching never panics, and a prefix rule never allows a command one of
// whose parts starts with another word.
func FuzzMatchBash(f *testing.F) {
	for _, c := range []string{"npm test", "npm test && rm x", "npm test 'a;b'", "npm test $(x)", "npm test\nrm", "a|b", "npm test 2>&1 > f", "npm test # x\nrm y", `npm test "a\"b"`, "npm\\\ntest"} {
		f.Add(c)
	}
	rules := []Rule{MustParse("Bash(npm test:*)"), MustParse("Bash(ls *)"), MustParse("Bash(git diff)")}
	f.Fuzz(func(t *testing.T, cmd string) {
		_, ok := Match(rules, bash(cmd), Context{Cwd: "/w"})
		if !ok {
			return
		}
		parts, lexed := splitCommand(cmd)
		if !lexed {
			t.Fatalf("%q is allowed but cannot be read", cmd)
		}
		for _, p := range parts {
			if len(p.words) == 0 || p.words[0] != "npm" && p.words[0] != "ls" && p.words[0] != "git" {
				t.Fatalf("%q is allowed, and its part %q runs %v", cmd, p.text, p.words)
			}
		}
	})
}

// A path out of a rule's folder is never matched by a pattern that does
// not itself say "..".
func FuzzMatchPath(f *testing.F) {
	for _, s := range []string{"src/**", "**", "*", "**/*.go", "./a/../b", "/x/**", "[", "a/**/b/**/c"} {
		f.Add(s, "../etc/passwd")
		f.Add(s, "src/a.go")
	}
	f.Fuzz(func(t *testing.T, pattern, p string) {
		r, err := Parse("Edit(" + escapeContent(pattern) + ")")
		if err != nil || r.Kind != KindPath {
			return // Edit(*) is a bare Edit
		}
		ctx := Context{Cwd: "/w/cwd", Root: "/w/cwd"}
		call := Call{ToolName: "Edit", Input: map[string]any{"file_path": p}}
		if !r.Matches(call, ctx) {
			return
		}
		abs, _ := callPath("Edit", call, ctx)
		if rel, err := filepath.Rel("/w/cwd", abs); err == nil && strings.HasPrefix(rel, "..") &&
			!strings.Contains(pattern, "..") && !strings.HasPrefix(pattern, "//") && !strings.HasPrefix(pattern, "~") {
			t.Fatalf("Edit(%s) allows %s, out of its folder", pattern, abs)
		}
	})
}
