package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"shepherd/backend/lifecycle"
)

func TestRecordRoundTrip(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	r := &Record{ID: "a1", ProjectID: "p-1", Command: "claude", Args: []string{"-p", "x"},
		Env: map[string]string{"K": "V"}, Cwd: "/tmp", Profile: ProfileClaudeJSON,
		ResumeArgs: []string{"--resume", "{sessionId}"}, Status: lifecycle.Failed,
		ExitReason: lifecycle.ReasonFailed, ExitCode: Ptr(3), Desired: lifecycle.DesiredRunning,
		CreatedAt: now, StartedAt: &now, StaleCheck: Ptr(false), GraceSec: 10, LogPath: "/x/agent.log"}
	if err := s.SaveRecord(r); err != nil {
		t.Fatal(err)
	}
	recs, bad, err := s.LoadRecords("p-1", now)
	if err != nil || len(bad) != 0 || len(recs) != 1 {
		t.Fatalf("load: %v %v %d", err, bad, len(recs))
	}
	if diff := cmp.Diff(r, recs[0]); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
	// No temp files left beside the record.
	ents, _ := os.ReadDir(s.AgentDir("p-1", "a1"))
	if len(ents) != 1 {
		t.Fatalf("agent folder holds %d entries", len(ents))
	}
	// Clone is deep.
	c := r.Clone()
	c.Args[0], c.Env["K"], *c.ExitCode = "changed", "changed", 9
	if r.Args[0] != "-p" || r.Env["K"] != "V" || *r.ExitCode != 3 {
		t.Fatal("Clone shares memory with the original")
	}
}

func TestParseRecordRejects(t *testing.T) {
	cases := map[string]string{
		"not json":      `{"id":`,
		"trailing data": `{"id":"a","command":"x","status":"running"} {}`,
		"bad id":        `{"id":"../a","command":"x","status":"running"}`,
		"no command":    `{"id":"a","status":"running"}`,
		"no status":     `{"id":"a","command":"x"}`,
		"wrong type":    `{"id":"a","command":"x","status":"running","pid":"12"}`,
	}
	for name, in := range cases {
		if _, err := ParseRecord([]byte(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestProjectIDStable(t *testing.T) {
	a := ProjectID("/home/u/My Project")
	if a != ProjectID("/home/u/My Project/") || a != ProjectID("/home/u/./My Project") {
		t.Fatal("id depends on how the path is written")
	}
	if a == ProjectID("/home/v/My Project") {
		t.Fatal("two folders share an id")
	}
	if !strings.HasPrefix(a, "my-project-") || ValidID(a) != nil {
		t.Fatalf("id %q", a)
	}
}
