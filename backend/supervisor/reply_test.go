package supervisor

import (
	"strings"
	"testing"

	"shepherd/backend/lifecycle"
)

// A Claude Code agent whose run ended is sent a message: it resumes in its
// session with the message as its prompt; the message is an event. A Codex
// agent the same (`exec resume <thread> MSG`). What cannot be sent is
// refused, saying why.
func TestReplyResumesTheSession(t *testing.T) {
	h := newClaudeHarness(t)
	h.claude("cc", "success", "success")
	r := h.waitStatus("cc", lifecycle.Completed)
	sid := r.SessionID
	_, err := h.e.SendMessage(t.Context(), h.project.ID, "cc", "  ")
	wantKind(t, err, ErrValidation, "empty")
	_, err = h.e.SendMessage(t.Context(), h.project.ID, "cc", strings.Repeat("x", MaxMessage+1))
	wantKind(t, err, ErrValidation, "over")
	if _, err := h.e.SendMessage(t.Context(), h.project.ID, "cc", "now add the tests, please"); err != nil {
		t.Fatal(err)
	}
	r = h.waitStatus("cc", lifecycle.Completed)
	inv := h.invocations()
	if len(inv) != 2 || inv[1].Resume != sid || inv[1].Args[len(inv[1].Args)-1] != "now add the tests, please" || inv[1].Args[len(inv[1].Args)-2] != "--" {
		t.Fatalf("resumed with %+v", inv)
	}
	if r.ResumePrompt != "" || r.ResumeCount != 1 {
		t.Fatalf("after the reply: prompt %q resumes %d", r.ResumePrompt, r.ResumeCount)
	}
	if ev := h.events(); !strings.Contains(ev, `"event":"message"`) || !strings.Contains(ev, `"message":"now add the tests, please"`) {
		t.Fatalf("events:\n%s", ev)
	}

	h.codex("cx", "success", "success", nil)
	r = h.waitStatus("cx", lifecycle.Completed)
	if _, err := h.e.SendMessage(t.Context(), h.project.ID, "cx", "and the docs"); err != nil {
		t.Fatal(err)
	}
	h.waitStatus("cx", lifecycle.Completed)
	inv = h.invocations()
	if last := inv[len(inv)-1]; strings.Join(last.Args, " ") != "exec --json resume "+r.SessionID+" and the docs" {
		t.Fatalf("codex resumed with %q", last.Args)
	}

	h.create(withID("plain", sh("true")))
	_, err = h.e.SendMessage(t.Context(), h.project.ID, "plain", "hi")
	wantKind(t, err, ErrNotResumable, "not a Claude Code or Codex agent")
	h.claude("busy", "silent", "success")
	h.waitStatus("busy", lifecycle.Running)
	_, err = h.e.SendMessage(t.Context(), h.project.ID, "busy", "hi")
	wantKind(t, err, ErrAlreadyRunning, "is running")
}

// A reply waits in the queue when maxRunning is reached, and runs when a
// slot frees.
func TestReplyQueued(t *testing.T) {
	h := newClaudeHarness(t)
	h.claude("cc", "success", "success")
	h.waitStatus("cc", lifecycle.Completed)
	s, _ := h.e.GetSettings(h.project.ID)
	s.MaxRunning = 1
	if _, err := h.e.PutSettings(h.project.ID, s); err != nil {
		t.Fatal(err)
	}
	h.create(withID("hog", sh("sleep 1000")))
	h.start("hog")
	r, err := h.e.SendMessage(t.Context(), h.project.ID, "cc", "go on")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != lifecycle.Queued {
		t.Fatalf("status %s, want queued", r.Status)
	}
	if _, err := h.e.StopAgent(t.Context(), h.project.ID, "hog", nil); err != nil {
		t.Fatal(err)
	}
	h.waitStatus("cc", lifecycle.Completed)
	inv := h.invocations()
	if last := inv[len(inv)-1]; last.Args[len(last.Args)-1] != "go on" {
		t.Fatalf("resumed with %q", last.Args)
	}
}
