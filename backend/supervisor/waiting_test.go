package supervisor

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/notify"
	"shepherd/backend/store"
)

// hookReceiver stands in for the API's POST /v1/hooks/claude: the agent is
// known by its credential, as there.
func hookReceiver(t *testing.T, e *Engine) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		ref, ok := e.AgentByCredential(tok)
		if !ok || r.URL.Path != "/v1/hooks/claude" {
			http.Error(w, "who?", http.StatusForbidden)
			return
		}
		b, _ := io.ReadAll(r.Body)
		if err := e.Hook(ref, b); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	e.SetAPIURL(srv.URL)
}

// A Claude Code agent asking for a permission (its PermissionRequest and
// Notification hooks, posted with its own credential to the URL its
// --settings name) waits for the user: Needs you, a notification, and never
// stale however long it waits; a new wait undoes an acknowledgement.
func TestPermissionHookWaitsForYou(t *testing.T) {
	h := newClaudeHarness(t)
	hookReceiver(t, h.e)
	h.claude("a", "permission", "")
	h.waitAgent("a", "waiting for a permission", func(r *store.Record) bool {
		return r.Activity != nil && r.Activity.State == store.ActivityWaiting
	})
	r := h.get("a")
	if r.Activity.Waiting != "permission for Bash" || !r.Activity.NeedsYou || r.Attention != "waiting: permission for Bash" {
		t.Fatalf("activity %+v attention %q", r.Activity, r.Attention)
	}
	if inv := h.invocations(); len(inv) != 1 || !strings.Contains(strings.Join(inv[0].Args, " "), `"/v1/hooks/claude"`) &&
		!strings.Contains(strings.Join(inv[0].Args, " "), "/v1/hooks/claude") {
		t.Fatalf("the hooks were not installed with --settings: %+v", inv)
	}
	if n := h.rec.notes(notify.KindWaiting); len(n) != 1 || !strings.Contains(n[0].Message, "permission for Bash") {
		t.Fatalf("notifications %+v, want one saying what it waits for", n)
	}
	for range 3 { // 33 s of silence, past the 10 s threshold
		h.goStale()
	}
	if r := h.get("a"); r.Status != lifecycle.Running || r.Stale || r.AutoResumeCount != 0 {
		t.Fatalf("a waiting agent was taken for hung: %s stale=%v resumes=%d", r.Status, r.Stale, r.AutoResumeCount)
	}
	if _, err := h.e.AckAgent(h.project.ID, "a"); err != nil {
		t.Fatal(err)
	}
	if r := h.get("a"); r.Attention != "" || r.AcknowledgedAt == nil {
		t.Fatalf("after ack: attention %q", r.Attention)
	}
	if !strings.Contains(h.events(), `"event":"waiting"`) {
		t.Fatal("no waiting event in the history")
	}
}

// An api_retry for a rate limit in the log: `waiting: rate limit until …`,
// not Needs you, never stale; the wait ends when the agent goes on.
func TestRateLimitRetryIsWaiting(t *testing.T) {
	h := newClaudeHarness(t)
	h.create(AgentSpec{ID: "r", Command: fakeClaude, Cwd: h.cwd, Profile: store.ProfileClaudeJSON,
		Args: []string{"-p", "--verbose", "--output-format", "stream-json", "go"},
		Env:  map[string]string{"FAKE_CLAUDE_MODE": "rate-limit", "FAKE_CLAUDE_TOOL_SECONDS": "3", "FAKE_CLAUDE_RECORD": h.record}})
	h.start("r")
	h.waitAgent("r", "waiting for the rate limit", func(r *store.Record) bool {
		h.e.PollLogsNow()
		return r.Activity != nil && r.Activity.State == store.ActivityWaiting
	})
	r := h.get("r")
	if !strings.HasPrefix(r.Activity.Waiting, "rate limit until ") || r.Activity.NeedsYou || r.Activity.Until == nil || r.Attention != "" {
		t.Fatalf("activity %+v attention %q", r.Activity, r.Attention)
	}
	if got := r.Activity.Until.Sub(h.clk.Now()); got < 59*time.Second || got > 61*time.Second {
		t.Fatalf("until is %s from now, want the retry's 60 s", got)
	}
	h.goStale()
	h.goStale()
	if r := h.get("r"); r.Stale || r.Status != lifecycle.Running || r.AutoResumeCount != 0 {
		t.Fatalf("a rate-limited agent was taken for hung: %s stale=%v", r.Status, r.Stale)
	}
	r = h.waitStatus("r", lifecycle.Completed)
	if r.AutoResumeCount != 0 {
		t.Fatalf("resumed %d times", r.AutoResumeCount)
	}
}

// The hooks are the agent's own: a body that is not a hook input is refused
// with what is wrong, and a hook from a run that ended changes nothing.
func TestHookBadInput(t *testing.T) {
	h := newClaudeHarness(t)
	h.claude("a", "silent", "")
	ref := AgentRef{ProjectID: h.project.ID, AgentID: "a"}
	for body, want := range map[string]string{
		`{}`:                                 "no hook_event_name",
		`{"hook_event_name":"PreToolUse"}`:   "not one Shepherd installs",
		`{"hook_event_name":"Stop"} {"x":1}`: "not one JSON object",
		`not json`:                           "not one JSON object",
	} {
		if err := h.e.Hook(ref, []byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Hook(%s) = %v, want %q", body, err, want)
		}
	}
	if err := h.e.Hook(AgentRef{ProjectID: h.project.ID, AgentID: "nobody"}, []byte(`{"hook_event_name":"Stop"}`)); err == nil {
		t.Error("a hook for an unknown agent was taken")
	}
	// -p: a Stop is the end of the run, not a wait for input.
	if err := h.e.Hook(ref, []byte(`{"hook_event_name":"Stop","session_id":"s"}`)); err != nil {
		t.Fatal(err)
	}
	if r := h.get("a"); r.Activity != nil && r.Activity.State == store.ActivityWaiting {
		t.Fatalf("a print-mode Stop reads as waiting: %+v", r.Activity)
	}
}
