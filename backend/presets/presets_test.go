package presets

import (
	"os/exec"
	"strings"
	"testing"
)

func TestArgs(t *testing.T) {
	args, resume := Claude.Args("fix the tests", "opus", []string{"--max-turns", "5"})
	if strings.Join(args, " ") != "-p --verbose --output-format stream-json --model opus --max-turns 5 -- fix the tests" ||
		strings.Join(resume, " ") != "-p --verbose --output-format stream-json --model opus --max-turns 5 --resume {sessionId} -- continue" {
		t.Fatalf("claude: %q / %q", args, resume)
	}
	args, resume = Codex.Args("fix the tests", "gpt-5", nil)
	if strings.Join(args, " ") != "exec --json -m gpt-5 fix the tests" ||
		strings.Join(resume, " ") != "exec --json -m gpt-5 resume {sessionId} continue" {
		t.Fatalf("codex: %q / %q", args, resume)
	}
	if _, err := Lookup("aider"); err == nil || !strings.Contains(err.Error(), "presets: claude, codex") {
		t.Fatalf("unknown: %v", err)
	}
	if p, err := Lookup("Codex"); err != nil || p.Profile != "codex-json" {
		t.Fatalf("lookup: %+v %v", p, err)
	}
}

func TestWorktreeByDefault(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	if WorktreeByDefault(dir) {
		t.Fatal("a plain folder is not a git project")
	}
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	if !WorktreeByDefault(dir) {
		t.Fatal("a git project with a commit gets worktrees by default")
	}
}
