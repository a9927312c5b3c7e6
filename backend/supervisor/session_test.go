package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
	"shepherd/internal/testutil"
)

// A session id read from an agent's log goes into its resume's command line
// (--resume {sessionId}); the log is the agent's to write. One that is not
// what Claude Code or Codex gives (a UUID) is refused — not kept, said once
// in the events — and a record that holds one anyway is not resumed: it
// never reaches the command line.
func TestSessionIDRefused(t *testing.T) {
	h := newClaudeHarness(t)
	marker := filepath.Join(t.TempDir(), "resumed")
	// It prints an init whose session id is an option, and says so twice.
	init := `{"type":"system","subtype":"init","session_id":"--dangerously-skip-permissions"}`
	h.create(AgentSpec{ID: "liar", Command: "/bin/sh", Profile: store.ProfileClaudeJSON,
		Args:       []string{"-c", "if [ -n \"$1\" ]; then touch " + marker + "; fi; echo '" + init + "'; echo '" + init + "'", "sh"},
		ResumeArgs: []string{"-c", "touch " + marker, "sh", "{sessionId}"}, GraceSec: 1})
	h.start("liar")
	h.waitStatus("liar", lifecycle.Completed)
	testutil.Eventually(t, "the refusal in the events", func() bool {
		h.e.PollLogsNow()
		return strings.Contains(h.events(), `"event":"session:refused"`)
	})
	if n := strings.Count(h.events(), `"event":"session:refused"`); n != 1 {
		t.Fatalf("the refusal said %d times, want once", n)
	}
	if r := h.get("liar"); r.SessionID != "" {
		t.Fatalf("session id kept: %q", r.SessionID)
	}
	_, err := h.e.ResumeAgent(context.Background(), h.project.ID, "liar")
	wantKind(t, err, ErrNotResumable, "no session id is known yet")

	// A record that holds one (written by hand, or by an engine that kept
	// what the log said) is not resumed either, and says why.
	h.e.Close()
	path := filepath.Join(h.e.Store().AgentDir(h.project.ID, "liar"), "record.json")
	r := h.diskRecord("liar")
	r.SessionID = "x --settings /tmp/evil.json"
	if err := h.e.Store().SaveRecord(r); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	e2 := h.engine(func(c *Config) { c.Clock = h.clk })
	_, err = e2.ResumeAgent(context.Background(), h.project.ID, "liar")
	wantKind(t, err, ErrNotResumable, "is not one Claude Code or Codex gives")
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the resume ran: %v", err)
	}
}
