package needsyou

import (
	"slices"
	"testing"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
)

// A crash loop acknowledged mid-run is known by its next end; crashes that
// end the same way stay acknowledged (and quiet); one that ends otherwise,
// or any failure of an agent that is not a loop, needs the user again.
func TestAcknowledgedLoop(t *testing.T) {
	now := time.Now()
	code := func(n int) *int { return &n }
	r := &store.Record{ID: "a", KeepAlive: true, Desired: lifecycle.DesiredRunning, AcknowledgedAt: &now, AckLoop: ackLoopUnknown,
		Status: lifecycle.Failed, ExitReason: lifecycle.ReasonFailed, ExitCode: code(3)}
	Transition(r)
	if r.AcknowledgedAt == nil || r.AckLoop != "failed/3/" || !QuietCrash(r) {
		t.Fatalf("the first end after the ack: ack %v loop %q", r.AcknowledgedAt, r.AckLoop)
	}
	again := r.Clone()
	Transition(again)
	if again.AcknowledgedAt == nil || !QuietCrash(again) {
		t.Fatal("the same crash again needs the user")
	}
	other := r.Clone()
	other.ExitCode = code(4)
	Transition(other)
	if other.AcknowledgedAt != nil || other.AckLoop != "" || QuietCrash(other) {
		t.Fatal("a crash that ends otherwise stays acknowledged")
	}
	plain := &store.Record{ID: "b", AcknowledgedAt: &now, Status: lifecycle.Interrupted}
	Transition(plain)
	if plain.AcknowledgedAt != nil {
		t.Fatal("a new failure stays acknowledged")
	}
	done := &store.Record{ID: "c", AcknowledgedAt: &now, Status: lifecycle.Completed}
	Transition(done)
	if done.AcknowledgedAt == nil {
		t.Fatal("a completion forgot the acknowledgment")
	}
}

// Claude Code's hooks go before a "--", only for a Claude Code agent with
// an API to report to and no --settings of its own.
func TestWithHooks(t *testing.T) {
	r := &store.Record{Profile: store.ProfileClaudeJSON}
	got := WithHooks(r, []string{"-p", "--", "hi"}, "http://127.0.0.1:1")
	if len(got) != 5 || !slices.Equal(got[:2], []string{"-p", "--settings"}) || got[2] == "" || !slices.Equal(got[3:], []string{"--", "hi"}) {
		t.Fatalf("args %q", got)
	}
	if got := WithHooks(r, []string{"-p"}, ""); !slices.Equal(got, []string{"-p"}) {
		t.Fatalf("no API: %q", got)
	}
	if got := WithHooks(r, []string{"--settings", "x.json"}, "http://x"); !slices.Equal(got, []string{"--settings", "x.json"}) {
		t.Fatalf("own settings: %q", got)
	}
	if got := WithHooks(&store.Record{Profile: store.ProfileGeneric}, []string{"a"}, "http://x"); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("not Claude Code: %q", got)
	}
}
