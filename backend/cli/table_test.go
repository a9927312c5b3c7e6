package cli

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

func lines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }

// widest is the widest line of out, in runes (what a terminal counts).
func widest(out string) int {
	w := 0
	for _, l := range lines(out) {
		w = max(w, runeLen(l))
	}
	return w
}

func TestFitTable(t *testing.T) {
	cols := []column{
		{head: "ID"},
		{head: "STATUS", min: 8},
		{head: "PID", drop: 2},
		{head: "COMMAND", drop: 1, min: 10},
		{head: "LOG", drop: 3, min: 20, keepEnd: true},
	}
	rows := [][]string{
		{"build", "running", "4242", "make -j4 all install check", "/home/u/.local/share/shepherd/projects/p/agents/build/agent.log"},
		{"claude-refactor", "paused · budget reached", "-", "claude -p --verbose --output-format stream-json fix", "/x/agent.log"},
	}
	for _, tc := range []struct {
		width int
		heads string // the columns shown
	}{
		{200, "ID STATUS PID COMMAND LOG"},
		{120, "ID STATUS PID COMMAND LOG"}, // COMMAND, then LOG (from its start) trimmed
		{80, "ID STATUS PID COMMAND LOG"},  // both trimmed further
		{60, "ID STATUS PID COMMAND"},      // LOG out (it needs 20), COMMAND trimmed
		{48, "ID STATUS PID"},
		{20, "ID STATUS"}, // never left out; may be wider than 20
	} {
		var b bytes.Buffer
		if err := fitTable(&b, cols, rows, tc.width, false); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if got := strings.Join(strings.Fields(lines(out)[0]), " "); got != tc.heads {
			t.Errorf("width %d: columns %q, want %q\n%s", tc.width, got, tc.heads, out)
		}
		if tc.width >= 40 && widest(out) > tc.width {
			t.Errorf("width %d: a line of %d columns\n%s", tc.width, widest(out), out)
		}
		for _, id := range []string{"build", "claude-refactor"} {
			if !strings.Contains(out, id+" ") {
				t.Errorf("width %d: the id %s is not whole\n%s", tc.width, id, out)
			}
		}
	}
	var b bytes.Buffer
	fitTable(&b, cols, rows, 120, false)
	if out := b.String(); !strings.Contains(out, "…") || !strings.Contains(out, "build/agent.log") {
		t.Errorf("at 120 the log path is not trimmed from its start:\n%s", out)
	}
	b.Reset()
	fitTable(&b, cols, rows, 40, true)
	if out := b.String(); !strings.Contains(out, rows[0][4]) || !strings.Contains(out, rows[1][3]) {
		t.Errorf("--wide trimmed something:\n%s", out)
	}
}

func TestTrimCell(t *testing.T) {
	for _, tc := range []struct {
		s       string
		width   int
		keepEnd bool
		want    string
	}{
		{"running", 10, false, "running"},
		{"paused · budget reached", 12, false, "paused · bu…"},
		{"make -j4 all", 9, false, "make -j4…"},
		{"/a/b/agent.log", 10, true, "…agent.log"},
		{"abc", 1, false, "…"},
	} {
		if got := trimCell(tc.s, tc.width, tc.keepEnd); got != tc.want || runeLen(got) > tc.width {
			t.Errorf("trimCell(%q, %d, %v) = %q, want %q", tc.s, tc.width, tc.keepEnd, got, tc.want)
		}
	}
}

// `ls` and `ps` as a user runs them: at 80 columns (a terminal's, and
// output that is not a terminal) and 120, no line is wider than the
// terminal, every agent is there by its whole id, the log path only with
// --wide (and in `get`), and a wider terminal shows more.
func TestListAndPsFitTheTerminal(t *testing.T) {
	p := isolate(t)
	serve(t, p)
	dir := t.TempDir()
	ok(t, "add-project", dir, "--name", "a-project-with-a-long-name")
	long := []string{"--", "/bin/sh", "-c", "echo starting the long running development server; exec sleep 300", "with", "more", "arguments"}
	ok(t, append([]string{"create", "a-project-with-a-long-name", "dev-server-with-a-long-id", "--grace", "1"}, long...)...)
	ok(t, "create", "a-project-with-a-long-name", "tests", "--", "/bin/sh", "-c", "exit 3")
	ok(t, "start", "a-project-with-a-long-name", "dev-server-with-a-long-id")
	ok(t, "start", "a-project-with-a-long-name", "tests")
	waitStatus(t, "a-project-with-a-long-name", "tests", "failed")
	logPath := record(t, "a-project-with-a-long-name", "tests").LogPath

	heads := map[int]int{}
	for _, width := range []int{80, 120} {
		t.Setenv("COLUMNS", "")
		if width != defaultWidth {
			t.Setenv("COLUMNS", itoa(width))
		}
		for _, cmd := range [][]string{{"ls", "a-project-with-a-long-name"}, {"ps", "--once"}} {
			out := ok(t, cmd...)
			if w := widest(out); w > width {
				t.Errorf("%s at %d columns: a line of %d\n%s", cmd[0], width, w, out)
			}
			for _, id := range []string{"dev-server-with-a-long-id", "tests"} {
				if !strings.Contains(out, id) {
					t.Errorf("%s at %d columns lacks %s\n%s", cmd[0], width, id, out)
				}
			}
			if strings.Contains(out, logPath) || strings.Contains(out, "agent.log") {
				t.Errorf("%s at %d columns shows a log path\n%s", cmd[0], width, out)
			}
			for _, h := range []string{"ID", "STATUS"} {
				if !strings.Contains(lines(out)[0], h) {
					t.Errorf("%s at %d columns lacks %s\n%s", cmd[0], width, h, out)
				}
			}
			if cmd[0] == "ps" && !strings.Contains(lines(out)[0], "CPU") {
				t.Errorf("ps at %d columns lacks CPU\n%s", width, out)
			}
			heads[width] += len(strings.Fields(lines(out)[0]))
			t.Logf("%s at %d:\n%s", cmd[0], width, out)
		}
	}
	if heads[120] <= heads[80] {
		t.Errorf("120 columns show no more than 80 (%d vs %d columns)", heads[120], heads[80])
	}
	t.Setenv("COLUMNS", "80")
	if out := ok(t, "ps", "--once", "--wide"); !strings.Contains(out, logPath) || !strings.Contains(out, "COMMAND") && !strings.Contains(out, "LOG") {
		t.Errorf("ps --wide lacks the log path:\n%s", out)
	}
	if out := ok(t, "ls", "a-project-with-a-long-name", "--wide"); !strings.Contains(out, "with more arguments") {
		t.Errorf("ls --wide trimmed the command:\n%s", out)
	}
	if out := ok(t, "get", "a-project-with-a-long-name", "tests"); !strings.Contains(out, logPath) {
		t.Errorf("get lacks the log path:\n%s", out)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
