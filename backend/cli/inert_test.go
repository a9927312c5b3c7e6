package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// What an agent wrote is inert on a terminal: `logs`, `events`, `ls` and
// `get` show its control sequences escaped; --raw prints them as they are;
// a pipe or a file gets the bytes unchanged.
func TestAgentTextIsInertOnATerminal(t *testing.T) {
	p := isolate(t)
	serve(t, p)
	ok(t, "add-project", t.TempDir(), "--name", "term")
	ok(t, "create", "term", "loud", "--name", "evil\x1b]0;title\x07name", "--",
		"/bin/sh", "-c", `printf '\033]0;pwned\007\033[2Jhello \033]8;;http://x\033\\link\033]8;;\033\\ \302\233H\n'`)
	ok(t, "start", "term", "loud")
	waitStatus(t, "term", "loud", "completed")
	onTerminal := func(args ...string) string {
		t.Helper()
		pt := openPTY(t)
		var errb bytes.Buffer
		if code := Main(context.Background(), args, pt.tty, &errb); code != 0 {
			t.Fatalf("shepherd %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
		}
		return pt.output()
	}
	for _, args := range [][]string{{"logs", "term", "loud"}, {"ls", "term"}, {"get", "term", "loud"}, {"events", "term"}} {
		out := onTerminal(args...)
		if strings.ContainsAny(out, "\x1b\x07") || strings.Contains(out, "\u009b") {
			t.Errorf("shepherd %s passed control sequences to the terminal: %q", args[0], out)
		}
		if args[0] == "logs" && !strings.Contains(out, `\x1b]0;pwned\x07\x1b[2Jhello \x1b]8;;http://x\x1b\link\x1b]8;;\x1b\ \u009bH`) {
			t.Errorf("logs: not shown escaped: %q", out)
		}
		if args[0] == "get" && !strings.Contains(out, `evil\x1b]0;title\x07name`) {
			t.Errorf("get: the name not shown escaped: %q", out)
		}
	}
	if out := onTerminal("logs", "--raw", "term", "loud"); !strings.Contains(out, "\x1b]0;pwned\x07\x1b[2J") {
		t.Errorf("--raw: %q", out)
	}
	if out := ok(t, "logs", "term", "loud"); !strings.Contains(out, "\x1b]0;pwned\x07") {
		t.Errorf("not a terminal: the bytes changed: %q", out)
	}
}

// The log rotation settings, through the CLI.
func TestLogSettingsCLI(t *testing.T) {
	p := isolate(t)
	serve(t, p)
	ok(t, "add-project", t.TempDir(), "--name", "s")
	out := strings.Join(strings.Fields(ok(t, "settings", "s")), " ")
	if !strings.Contains(out, "logMaxMiB 10") || !strings.Contains(out, "logKeep 5") {
		t.Fatalf("defaults:\n%s", out)
	}
	out = strings.Join(strings.Fields(ok(t, "settings", "s", "--logMaxMiB", "2", "--logKeep", "0")), " ")
	if !strings.Contains(out, "logMaxMiB 2") || !strings.Contains(out, "logKeep 0") {
		t.Fatalf("set:\n%s", out)
	}
	fails(t, 1, "logMaxMiB must be between 1 and 10240", "settings", "s", "--logMaxMiB", "0")
}
