package permrules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func bash(cmd string) Call {
	return Call{ToolName: "Bash", Input: map[string]any{"command": cmd, "description": "d"}, ToolUseID: "toolu_1"}
}

func TestMatchBash(t *testing.T) {
	for _, tc := range []struct {
		rule string
		cmd  string
		want bool
	}{
		{"Bash", "rm -rf /", true},
		{"Bash", "echo $(id)", true}, // only a bare Bash matches what cannot be read
		{"Bash(git diff)", "git diff", true},
		{"Bash(git diff)", "git  diff", true}, // words, not spacing
		{"Bash(git diff)", "git diff HEAD", false},
		{"Bash(git diff)", "git diff; rm -rf /", false},
		{"Bash(git diff)", "git diff && git diff", true}, // every part is allowed
		{"Bash(npm test:*)", "npm test", true},
		{"Bash(npm test:*)", "npm test --watch", true},
		{"Bash(npm test:*)", "npm testx", false}, // a word boundary
		{"Bash(npm test:*)", "npm test && rm -rf build", false},
		{"Bash(npm test:*)", "npm test || curl evil.example", false},
		{"Bash(npm test:*)", "npm test | tee out", false},
		{"Bash(npm test:*)", "npm test & rm x", false},
		{"Bash(npm test:*)", "npm test\nrm x", false},
		{"Bash(npm test:*)", "npm test $(rm x)", false},
		{"Bash(npm test:*)", "npm test `rm x`", false},
		{"Bash(npm test:*)", `npm test "$(rm x)"`, false},
		{"Bash(npm test:*)", "npm test 2>&1", true},
		{"Bash(npm test:*)", "npm test >/dev/null 2>&1", true},
		{"Bash(npm test:*)", "npm test > out.txt", false}, // a write it does not name
		{"Bash(npm test:*)", "npm test 'a;b'", true},      // a quoted ; is a word
		{"Bash(npm test:*)", "npm test # && rm x", true},  // a comment
		{"Bash(npm test:*)", "(npm test)", false},
		{"Bash(npm test:*)", "FOO=1 npm test", false},
		{"Bash(npm test:*)", "", false},
		{"Bash(ls *)", "ls -la", true},
		{"Bash(ls *)", "ls", true}, // a single trailing " *" is optional
		{"Bash(ls *)", "lsof", false},
		{"Bash(ls*)", "lsof", true},
		{"Bash(npm run * --watch)", "npm run dev --watch", true},
		{"Bash(npm run * --watch)", "npm run dev", false},
		{"Bash(npm run * --watch)", "npm run dev --watch; rm x", false},
		{"Bash(* install)", "npm install", true},
		{`Bash(echo \*)`, "echo '*'", true},
		{`Bash(echo a\*)`, "echo abc", false}, // an escaped star is a star
		{"Bash(echo hi > out.txt)", "echo hi > out.txt", true},
		{"Bash(echo hi > out.txt)", "echo hi '>' out.txt", false}, // a quoted > is a word
		{"Bash(rm)", "rm '>' /dev/null", false},                   // not a redirection to drop
		{"Bash(echo:*)", "echo '>' x", true},                      // prints "> x"
		{"Bash(cat:*)", "cat <>file", false},                      // <> opens for writing
		{"Bash(echo *)", "echo hi > o", false},                    // "o" is in the rule's text, not a target it names
		{"Bash(make * > build.log)", "make all > build.log", true},
		{"Bash(make * > build.log)", "make all > /etc/x", false},
		{"Bash(git commit:*)", `git commit -m "fix: a (b)"`, true},
	} {
		t.Run(tc.rule+" "+tc.cmd, func(t *testing.T) {
			r := MustParse(tc.rule)
			if got := r.Matches(bash(tc.cmd), Context{Cwd: "/w"}); got != tc.want {
				t.Fatalf("%s on %q = %v, want %v", tc.rule, tc.cmd, got, tc.want)
			}
		})
	}
}

// A compound command is allowed when each part is, by any of the rules.
func TestMatchCompoundAcrossRules(t *testing.T) {
	rules := []Rule{MustParse("Bash(npm test:*)"), MustParse("Bash(git diff)")}
	used, ok := Match(rules, bash("npm test && git diff"), Context{})
	if !ok || len(used) != 2 {
		t.Fatalf("ok %v used %v", ok, used)
	}
	if _, ok := Match(rules, bash("npm test && git diff && rm x"), Context{}); ok {
		t.Fatal("rm x allowed")
	}
	used, ok = Match(rules, bash("npm test; npm test -w"), Context{})
	if !ok || len(used) != 1 || used[0].String() != "Bash(npm test:*)" {
		t.Fatalf("ok %v used %v", ok, used)
	}
}

func TestMatchPaths(t *testing.T) {
	ctx := Context{Cwd: "/w/proj/sub", Root: "/w/proj", Home: "/home/u"}
	read := func(p string) Call { return Call{ToolName: "Read", Input: map[string]any{"file_path": p}} }
	edit := func(tool, p string) Call { return Call{ToolName: tool, Input: map[string]any{"file_path": p}} }
	for _, tc := range []struct {
		rule string
		call Call
		want bool
	}{
		{"Read(./src/**)", read("/w/proj/sub/src/a/b.go"), true},
		{"Read(./src/**)", read("src/a.go"), true}, // relative to the cwd
		{"Read(./src/**)", read("/w/proj/src/a.go"), false},
		{"Read(src/**)", read("/w/proj/sub/src/a.go"), true},
		{"Read(src)", read("/w/proj/sub/src/a.go"), true}, // a folder covers its files
		{"Read(src/)", read("/w/proj/sub/src/a.go"), true},
		{"Read(src/)", read("/w/proj/sub/src"), false}, // a folder only
		{"Read(*.env)", read("/w/proj/sub/.env"), true},
		{"Read(*.env)", read("/w/proj/sub/x/.env"), false}, // anchored to the cwd
		{"Read(**/*.env)", read("/w/proj/sub/x/y/a.env"), true},
		{"Read(*.go)", read("/w/proj/x.go"), false}, // never out of its folder
		{"Read(**)", read("/w/proj/sub/../x.go"), false},
		{"Read(**/*.go)", read("../../etc/x.go"), false},
		{"Read(../lib/**)", read("/w/proj/lib/a.go"), true},   // a pattern that says ..
		{"Read(/docs/*.md)", read("/w/proj/docs/a.md"), true}, // the project root
		{"Read(/docs/*.md)", read("/docs/a.md"), false},
		{"Read(/docs/*.md)", read("/w/proj/docs/x/a.md"), false},
		{"Read(//etc/hosts)", read("/etc/hosts"), true}, // absolute
		{"Read(~/.zshrc)", read("/home/u/.zshrc"), true},
		{"Read(~/.zshrc)", read("~/.zshrc"), true},
		{"Read(/src/[ab].go)", read("/w/proj/src/a.go"), true},
		{"Read(/src/?.go)", read("/w/proj/src/ab.go"), false},
		{"Read", read("/anything"), true},
		{"Read(//x/**)", Call{ToolName: "Grep", Input: map[string]any{"path": "/x/y", "pattern": "p"}}, true},
		{"Read(./**)", Call{ToolName: "Glob", Input: map[string]any{"pattern": "*.go"}}, false}, // the cwd itself
		{"Read(//w/**)", Call{ToolName: "Glob", Input: map[string]any{"pattern": "*.go"}}, true},
		{"Read(//x/**)", edit("Edit", "/x/a"), false}, // a Read rule never allows an edit
		{"Edit(//x/**)", edit("Edit", "/x/a"), true},
		{"Edit(//x/**)", edit("Write", "/x/a"), true}, // Edit rules cover every editing tool
		{"Edit(//x/**)", edit("MultiEdit", "/x/a"), true},
		{"Edit(//x/**)", Call{ToolName: "NotebookEdit", Input: map[string]any{"notebook_path": "/x/n.ipynb"}}, true},
		{"Edit(//x/**)", read("/x/a"), false},
		{"Edit", edit("Write", "/x/a"), true},
		{"Write(//x/**)", edit("Write", "/x/a"), true},
		{"Write(//x/**)", edit("Edit", "/x/a"), false},
		{"Edit(//x/**)", edit("Edit", ""), false},
		{"Read(~/.zshrc)", read("/home/u/.zshrc"), true},
	} {
		t.Run(tc.rule+" "+tc.call.ToolName+" "+str(tc.call.Input, "file_path"), func(t *testing.T) {
			if got := MustParse(tc.rule).Matches(tc.call, ctx); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	// No home folder known: ~ rules match nothing.
	if MustParse("Read(~/.zshrc)").Matches(read("/home/u/.zshrc"), Context{Cwd: "/w"}) {
		t.Fatal("~ without a home")
	}
}

// A symlink inside an allowed folder that points out of it is not allowed.
func TestMatchPathSymlink(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{filepath.Join(proj, "src"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(proj, "src", "link")); err != nil {
		t.Fatal(err)
	}
	ctx := Context{Cwd: proj}
	r := MustParse("Edit(src/**)")
	call := func(p string) Call { return Call{ToolName: "Edit", Input: map[string]any{"file_path": p}} }
	if !r.Matches(call(filepath.Join(proj, "src", "a.go")), ctx) {
		t.Fatal("a plain file in src is not allowed")
	}
	if r.Matches(call(filepath.Join(proj, "src", "link", "secret")), ctx) {
		t.Fatal("a file through a symlink out of src is allowed")
	}
	// The cwd itself under a symlink (macOS' /tmp) still matches.
	alias := filepath.Join(dir, "alias")
	if err := os.Symlink(proj, alias); err != nil {
		t.Fatal(err)
	}
	if !r.Matches(call(filepath.Join(alias, "src", "a.go")), Context{Cwd: alias}) {
		t.Fatal("a cwd reached through a symlink no longer matches")
	}
}

func TestMatchOthers(t *testing.T) {
	fetch := func(u string) Call { return Call{ToolName: "WebFetch", Input: map[string]any{"url": u, "prompt": "p"}} }
	for _, tc := range []struct {
		rule string
		call Call
		want bool
	}{
		{"WebFetch(domain:example.com)", fetch("https://example.com/a"), true},
		{"WebFetch(domain:example.com)", fetch("https://EXAMPLE.com./a"), true},
		{"WebFetch(domain:example.com)", fetch("https://api.example.com/a"), false},
		{"WebFetch(domain:example.com)", fetch("https://example.com.evil.net/"), false},
		{"WebFetch(domain:example.com)", fetch("https://evil.net/?u=https://example.com"), false},
		{"WebFetch(domain:example.com)", fetch("https://example.com@evil.net/"), false},
		{"WebFetch(domain:*.example.com)", fetch("https://api.example.com/a"), true},
		{"WebFetch(domain:*.example.com)", fetch("https://example.com/a"), false},
		{"WebFetch(domain:example.com)", fetch("not a url"), false},
		{"WebFetch", fetch("https://x.y/"), true},
		{"WebSearch(claude ai)", Call{ToolName: "WebSearch", Input: map[string]any{"query": "claude ai"}}, true},
		{"WebSearch(claude ai)", Call{ToolName: "WebSearch", Input: map[string]any{"query": "claude ai docs"}}, false},
		{"mcp__github", Call{ToolName: "mcp__github__create_issue"}, true},
		{"mcp__github__*", Call{ToolName: "mcp__github__create_issue"}, true},
		{"mcp__github__get_*", Call{ToolName: "mcp__github__get_issue"}, true},
		{"mcp__github__get_*", Call{ToolName: "mcp__github__create_issue"}, false},
		{"mcp__github__create_issue", Call{ToolName: "mcp__github__create_issue"}, true},
		{"mcp__github", Call{ToolName: "mcp__githubx__create_issue"}, false},
		{"mcp__github", Call{ToolName: "Bash"}, false},
		{"Agent", Call{ToolName: "Task"}, true}, // aliases on both sides
		{"TodoWrite", Call{ToolName: "TodoWrite"}, true},
		{"TodoWrite", Call{ToolName: "Bash"}, false},
	} {
		t.Run(tc.rule+" "+tc.call.ToolName, func(t *testing.T) {
			if got := MustParse(tc.rule).Matches(tc.call, Context{Cwd: "/w"}); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// The agent's questions are never answered by a rule, not even a bare one
// built by hand.
func TestAskUserQuestionNeverMatched(t *testing.T) {
	r := Rule{Tool: AskUserQuestion, Kind: KindTool}
	if _, ok := Match([]Rule{r, MustParse("Bash")}, Call{ToolName: AskUserQuestion, Input: map[string]any{"questions": []any{}}}, Context{}); ok {
		t.Fatal("a question was answered by a rule")
	}
}

func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		in    string
		words string // parts joined by " | ", words by ","
		ok    bool
	}{
		{"a b", "a,b", true},
		{"a 'b c' \"d e\" f\\ g", "a,b c,d e,f g", true},
		{"a && b || c; d | e & f |& g", "a | b | c | d | e | f | g", true},
		{"a 2>&1 >/dev/null", "a", true},
		{"a > out", "a,>,out", true},
		{"a '>' /dev/null", "a,>,/dev/null", true},
		{"a <>f", "a,<>,f", true},
		{"a &>/dev/null", "a", true},
		{"a >> log 2> err", "a,>>,log,2>,err", true},
		{"a \"x\\\"y\"", `a,x"y`, true},
		{"a ''", "a,", true},
		{"a \\\n b", "a,b", true},
		{"a # c; d", "a", true},
		{"a#b", "a#b", true},
		{"{ a; }", "", false},
		{"a {b,c}", "a,{b,c}", true},
		{"a \"$(b)\"", "", false},
		{"a '$(b)'", "a,$(b)", true},
		{"a \"", "", false},
		{"a \\", "", false},
	} {
		cmds, ok := splitCommand(tc.in)
		if ok != tc.ok {
			t.Fatalf("%q: ok %v", tc.in, ok)
		}
		if !ok {
			continue
		}
		var parts []string
		for _, c := range cmds {
			parts = append(parts, strings.Join(c.words, ","))
		}
		if got := strings.Join(parts, " | "); got != tc.words {
			t.Fatalf("%q: got %q, want %q", tc.in, got, tc.words)
		}
	}
}
