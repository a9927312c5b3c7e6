package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shepherd/backend/store"
	"shepherd/backend/supervisor"
	"shepherd/internal/testutil"
)

// Settings and resume through the CLI against a real engine.
func TestSettingsAndResume(t *testing.T) {
	p := isolate(t)
	dir := t.TempDir()
	serve(t, p)
	ok(t, "add-project", dir, "--name", "proj")

	out := ok(t, "settings", "proj")
	for _, want := range []string{"watchdogIntervalSec    30", "staleCheckIntervalSec  60", "staleThresholdSec      300", "resultGraceSec         5", "autoResumeLimit        3"} {
		if !strings.Contains(out, want) {
			t.Fatalf("default settings lack %q:\n%s", want, out)
		}
	}
	var s supervisor.Settings
	okJSON(t, &s, "settings", "proj", "--staleThresholdSec", "600", "--notifyCompletion", "true")
	if s.StaleThresholdSec != 600 || !s.NotifyCompletion || s.WatchdogIntervalSec != 30 {
		t.Fatalf("after change: %+v", s)
	}
	fails(t, 1, "watchdogIntervalSec must be between 1", "settings", "proj", "--watchdogIntervalSec", "0")
	fails(t, 2, "want true or false", "settings", "proj", "--notifyNative", "maybe")
	okJSON(t, &s, "settings", "proj")
	if s.StaleThresholdSec != 600 || s.WatchdogIntervalSec != 30 {
		t.Fatalf("a refused change changed something: %+v", s)
	}

	// Resume: refused without resume args or a session id; with them, the
	// resume args run with the session id filled in.
	ok(t, "create", "proj", "plain", "--", "true")
	fails(t, 1, "Agent 'plain' cannot be resumed: it has no resume arguments", "resume", "proj", "plain")
	marker := filepath.Join(dir, "resumed-with")
	ok(t, "create", "proj", "sess", "--profile", "claude-stream-json",
		"--resume-args", `-c "echo resumed \"$0\" > `+marker+`" {sessionId}`, "--",
		"sh", "-c", `echo '{"type":"system","subtype":"init","session_id":"3f2a9c4e-8b1d-4e6f-a2c7-5d9e0f1b3a71"}'`)
	fails(t, 1, "no session id is known yet", "resume", "proj", "sess")
	ok(t, "start", "proj", "sess")
	var r store.Record
	testutil.Eventually(t, "the run to complete with its session id", func() bool {
		okJSON(t, &r, "get", "proj", "sess")
		return r.Status == "completed" && r.SessionID == "3f2a9c4e-8b1d-4e6f-a2c7-5d9e0f1b3a71"
	})
	if out := ok(t, "resume", "proj", "sess"); !strings.Contains(out, "Resumed sess") {
		t.Fatalf("resume: %q", out)
	}
	testutil.Eventually(t, "the resumed run to write its session id", func() bool {
		b, _ := os.ReadFile(marker)
		return string(b) == "resumed 3f2a9c4e-8b1d-4e6f-a2c7-5d9e0f1b3a71\n"
	})
	okJSON(t, &r, "get", "proj", "sess")
	if r.ResumeCount != 1 || r.AutoResumeCount != 0 {
		t.Fatalf("counts: resume %d auto %d", r.ResumeCount, r.AutoResumeCount)
	}
}
