package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// sized makes the pseudo-terminal cols columns wide.
func (p *pty) sized(t *testing.T, cols int) *pty {
	t.Helper()
	if err := unix.IoctlSetWinsize(int(p.tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: uint16(cols)}); err != nil {
		t.Fatal(err)
	}
	return p
}

// sofar is what was written to the terminal until now.
func (p *pty) sofar() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return string(p.out)
}

// On a terminal, tables fit its width (the escaping of agent text in
// between does not hide the terminal): a wide one shows a long command
// whole, an 80-column one trims it.
func TestTablesFitTheTerminal(t *testing.T) {
	p := isolate(t)
	serve(t, p)
	ok(t, "add-project", t.TempDir(), "--name", "wide")
	long := "sleep 60 " + strings.Repeat("--a-long-argument ", 8)
	ok(t, "create", "wide", "long", "--", "sh", "-c", long)
	ls := func(cols int) string {
		t.Helper()
		pt := openPTY(t).sized(t, cols)
		var errb bytes.Buffer
		if code := Main(context.Background(), []string{"ls", "wide"}, pt.tty, &errb); code != 0 {
			t.Fatalf("ls: exit %d: %s", code, errb.String())
		}
		return pt.output()
	}
	if out := ls(220); !strings.Contains(out, strings.TrimSpace(long)) {
		t.Errorf("a 220-column terminal: the command is not whole:\n%s", out)
	}
	if out := ls(80); strings.Contains(out, strings.TrimSpace(long)) || !strings.Contains(out, "…") {
		t.Errorf("an 80-column terminal: the command is not trimmed:\n%s", out)
	}
}

// `shepherd ps` on a terminal is the live dashboard, until Ctrl-C (here:
// its context ends).
func TestLiveDashboardOnATerminal(t *testing.T) {
	if term.IsTerminal(int(os.Stdin.Fd())) {
		t.Skip("the dashboard would read this terminal's keys")
	}
	p := isolate(t)
	serve(t, p)
	pt := openPTY(t).sized(t, 120)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	var errb syncBuf
	go func() { done <- Main(ctx, []string{"ps"}, pt.tty, &errb) }()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(pt.sofar(), "q quits") {
		select {
		case code := <-done:
			t.Fatalf("ps ended (exit %d) instead of staying live:\n%s%s", code, pt.sofar(), errb.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no dashboard in 15 s:\n%s", pt.sofar())
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("ps after Ctrl-C: exit %d: %s", code, errb.String())
	}
	if out := pt.output(); !strings.Contains(out, "\x1b[H\x1b[2J") || !strings.Contains(out, "No agents in the loaded projects.") {
		t.Fatalf("not the dashboard's frame: %q", out)
	}
}
