package store

import (
	"errors"
	"fmt"
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

// events.jsonl is rotated at its cap with a few older files kept, and a
// read for one agent's last events goes back across them.
func TestEventsRotateAndAreReadAcross(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	oldMax, oldKeep := EventsMaxBytes, EventsKeep
	EventsMaxBytes, EventsKeep = 4096, 2
	defer func() { EventsMaxBytes, EventsKeep = oldMax, oldKeep }()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := s.AppendEvent("p", Event{Time: t0, Event: "created", AgentID: "quiet"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 60; i++ {
		if err := s.AppendEvent("p", Event{Time: t0.Add(time.Duration(i+1) * time.Second), Event: "hook", AgentID: "loud",
			Reason: strings.Repeat("x", 100)}); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(s.EventsPath("p") + "*")
	total := int64(0)
	for _, f := range files {
		fi, _ := os.Stat(f)
		total += fi.Size()
		if fi.Size() > 4096 {
			t.Errorf("%s is %d bytes, over the cap", f, fi.Size())
		}
	}
	if _, err := os.Stat(s.EventsPath("p") + ".1"); err != nil {
		t.Fatalf("not rotated: %v", files)
	}
	if total > 3*4096+200 {
		t.Errorf("events take %d bytes, more than 3 files of 4096", total)
	}
	// The quiet agent's event is in the oldest file kept.
	evs, err := s.ReadEvents("p", "quiet", 10)
	if err != nil || len(evs) != 1 || evs[0].Event != "created" {
		t.Errorf("quiet agent's events: %+v %v", evs, err)
	}
	evs, _ = s.ReadEvents("p", "loud", 5)
	if len(evs) != 5 || !evs[4].Time.Equal(t0.Add(60*time.Second)) || !evs[0].Time.Before(evs[4].Time) {
		t.Errorf("last 5, oldest first: %+v", evs)
	}
}

// A remove while a writer is still making files in the agent's folder (the
// shim writes exit.json just after telling the engine of the end): the
// agent is removed whatever else remains — never an error that says nothing
// changed while its record is gone.
func TestRemoveAgentWithAWriterInItsFolder(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for _, keepLog := range []bool{false, true} {
		r := &Record{ID: "a1", ProjectID: "p-1", Command: "true", Status: lifecycle.Completed, CreatedAt: now}
		if err := s.SaveRecord(r); err != nil {
			t.Fatal(err)
		}
		dir := s.AgentDir("p-1", "a1")
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("exit-%d.json", i)), []byte("{}\n"), 0o600)
			}
		}()
		err := s.RemoveAgent("p-1", "a1", keepLog)
		close(stop)
		<-done
		if err != nil && !errors.Is(err, ErrLeftovers) {
			t.Fatalf("keepLog %v: remove: %v (not ErrLeftovers: as if nothing changed)", keepLog, err)
		}
		recs, bad, err := s.LoadRecords("p-1", now)
		if err != nil || len(bad) != 0 || len(recs) != 0 {
			t.Fatalf("keepLog %v: after the remove the project loads %d agents (%v, %v)", keepLog, len(recs), bad, err)
		}
		_ = os.RemoveAll(dir)
	}
}
