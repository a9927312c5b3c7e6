package permrules

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shepherd/backend/sandbox"
)

func TestWidens(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(dir, "proj")
	other := filepath.Join(dir, "other")
	for _, d := range []string{filepath.Join(proj, "src"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A symlink in the granted folder pointing out of it.
	if err := os.Symlink(other, filepath.Join(proj, "out")); err != nil {
		t.Fatal(err)
	}
	g, err := sandbox.Parse([]string{"@write:" + proj})
	if err != nil {
		t.Fatal(err)
	}
	gNet, err := sandbox.Parse([]string{"@write:" + proj, "@network"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := Context{Cwd: proj, Home: filepath.Join(dir, "home")}
	for _, tc := range []struct {
		rule string
		net  bool
		says string // "" = does not widen
	}{
		// Reads are allowed everywhere.
		{rule: "Read"},
		{rule: "Read(//etc/**)"},
		{rule: "Grep"},
		// Edits stay inside the write grants.
		{rule: "Edit(src/**)"},
		{rule: "Edit(**/*.go)"},
		{rule: "Write(/src/a.go)"},
		{rule: "Edit(//" + strings.TrimPrefix(proj, "/") + "/**)"},
		{rule: "Edit", says: "allows writing any file"},
		{rule: "Write", says: "allows writing any file"},
		{rule: "Edit(//etc/**)", says: "allows writing in /etc, outside the agent's write grants (" + proj + ")"},
		{rule: "Edit(../other/**)", says: "allows writing in " + other},
		{rule: "Edit(~/.bashrc)", says: "allows writing in " + filepath.Join(dir, "home", ".bashrc")},
		{rule: "Edit(out/**)", says: "allows writing in " + filepath.Join(proj, "out") + ", which is " + other}, // through the symlink
		{rule: "NotebookEdit(//tmp/*.ipynb)", says: "allows writing in /tmp"},
		// The network needs @network.
		{rule: "WebFetch", says: "reaches the network, and the agent has no @network"},
		{rule: "WebFetch(domain:example.com)", says: "no @network"},
		{rule: "WebSearch", says: "no @network"},
		{rule: "WebFetch(domain:example.com)", net: true},
		{rule: "Bash(curl:*)", says: "reaches the network"},
		{rule: "Bash(curl https://example.com)", says: "reaches the network"},
		{rule: "Bash(curl:*)", net: true},
		{rule: "Bash(git push:*)", says: "allows git push, which reaches the network"},
		{rule: "Bash(git push origin main)", says: "git push"},
		{rule: "Bash(npm install)", says: "npm install"},
		{rule: "Bash(npm install)", net: true},
		{rule: "Bash(git diff:*)"},
		{rule: "Bash(npm test:*)"},
		{rule: "Bash(go test:*)"},
		{rule: "Bash(go get:*)", says: "go get"},
		{rule: "Bash(sudo curl x)", says: "reaches the network"}, // through a wrapper
		{rule: "Bash(timeout 5 curl x)", says: "reaches the network"},
		{rule: "Bash(FOO=1 curl x)", says: "reaches the network"},
		{rule: "Bash(/usr/bin/curl x)", says: "reaches the network"},
		// Every command, or any code.
		{rule: "Bash", says: "allows every command"},
		{rule: "Bash", net: true, says: "allows every command, which may write outside the agent's write grants (" + proj + ")"},
		{rule: "Bash(*)", says: "allows every command"},
		{rule: "Bash(* install)", says: "allows every command"},
		{rule: "Bash(np*)", says: "allows every command"},
		{rule: "Bash(sh -c:*)", says: "lets sh run any code"},
		{rule: "Bash(python3:*)", says: "lets python3 run any code"},
		{rule: "Bash(python3 -c *)", says: "lets python3 run any code"},
		{rule: "Bash(python3 scripts/check.py:*)"},
		{rule: "Bash(env:*)", says: "lets env run any command"},
		{rule: "Bash(xargs:*)", says: "lets xargs run any command"},
		{rule: "Bash(sudo:*)", says: "lets sudo run any command"},
		{rule: "Bash(npm:*)", says: "lets npm run any code"},
		{rule: "Bash(npm run*)", says: "lets npm run any code"},
		{rule: "Bash(npm run test*)"},
		// Writes name paths inside the grants.
		{rule: "Bash(rm -rf build)"},
		{rule: "Bash(rm -rf " + proj + "/build)"},
		{rule: "Bash(rm -rf /etc/x)", says: "lets rm write /etc/x, outside the agent's write grants"},
		{rule: "Bash(rm -rf ../other)", says: "lets rm write " + other},
		{rule: "Bash(rm -rf out/x)", says: "lets rm write " + filepath.Join(proj, "out", "x") + ", which is " + filepath.Join(other, "x")}, // through the symlink
		{rule: "Bash(rm:*)", says: "lets rm write wherever its further arguments say"},
		{rule: "Bash(rm -rf build:*)", says: "lets rm write wherever"},
		{rule: "Bash(mv * /etc)", says: "lets mv write wherever"},
		{rule: "Bash(sudo rm /etc/x)", says: "lets rm write /etc/x"},
		{rule: "Bash(dd if=/dev/zero of=/etc/x)", says: "lets dd write /etc/x"},
		{rule: "Bash(dd if=/dev/zero of=img)"},
		{rule: "Bash(sed -i s/a/b/ /etc/x)", says: "lets sed write /etc/x"},
		{rule: "Bash(sed -n 1p /etc/x)"},
		{rule: "Bash(echo hi > /etc/x)", says: "writes /etc/x"},
		{rule: "Bash(echo hi > out.txt)"},
		{rule: "Bash(echo * > /etc/x)", says: "writes /etc/x"},
		{rule: "Bash(echo * > *)", says: "writes wherever its wildcard says"},
		{rule: "Bash(rm '>' /dev/null)", says: "lets rm write /dev/null"}, // a quoted > is an argument
		{rule: "Bash(ls -la /etc)"},
		// MCP tools act through their servers.
		{rule: "mcp__shepherd__start_process"},
		{rule: "TodoWrite"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			grants := g
			if tc.net {
				grants = gNet
			}
			err := Widens(MustParse(tc.rule), grants, ctx)
			if tc.says == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("allowed; want %q", tc.says)
			}
			if !errors.Is(err, ErrWidens) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %q, want it to say %q", err, tc.says)
			}
			if !strings.Contains(err.Error(), tc.rule) && !strings.Contains(err.Error(), MustParse(tc.rule).String()) {
				t.Fatalf("error %q does not name the rule", err)
			}
		})
	}
}

// With no write grant at all, nothing that writes is allowed; a grant of
// the whole file system and the network allows everything.
func TestWidensExtremes(t *testing.T) {
	none, _ := sandbox.Parse(nil)
	ctx := Context{Cwd: t.TempDir()}
	for _, r := range []string{"Edit(src/**)", "Bash(rm x)", "Bash(echo a > b)"} {
		if err := Widens(MustParse(r), none, ctx); err == nil || !strings.Contains(err.Error(), "(none)") {
			t.Fatalf("%s with no grants: %v", r, err)
		}
	}
	all, err := sandbox.Parse([]string{"@write:/", "@network"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"Edit", "Edit(//etc/**)", "Bash(rm /etc/x)", "WebFetch", "Bash(curl:*)"} {
		if err := Widens(MustParse(r), all, ctx); err != nil {
			t.Fatalf("%s with every grant: %v", r, err)
		}
	}
}
