package supervisor

import (
	"context"
	"strings"
	"unicode/utf8"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/hook"
)

// Reply (SPEC "Answers"): a Claude Code or Codex agent whose run ended is
// sent a message — it resumes in its session with the message as the
// prompt (`claude -p --resume <id> MSG`, `codex exec resume <id> MSG`),
// through the queue and maxRunning like any resume. The message is an
// event ("message"), which the conversation shows as the user's turn.

// MaxMessage bounds a message, in bytes (it goes on a command line).
const MaxMessage = 32 << 10

// SendMessage resumes the agent's session with message as its prompt.
func (e *Engine) SendMessage(ctx context.Context, projectID, agentID, message string) (*store.Record, error) {
	msg := strings.TrimSpace(message)
	switch {
	case msg == "":
		return nil, newErr(ErrValidation, "the message is empty")
	case len(msg) > MaxMessage:
		return nil, newErr(ErrValidation, "the message is %d bytes, over %d", len(msg), MaxMessage)
	case !utf8.ValidString(msg) || strings.ContainsRune(msg, 0):
		return nil, newErr(ErrValidation, "the message is not text (invalid UTF-8 or a NUL byte)")
	}
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.rec
	switch {
	case !store.Structured(r.Profile):
		return nil, newErr(ErrNotResumable, "agent '%s' cannot be sent a message: it is not a Claude Code or Codex agent (profile %q)", agentID, r.Profile)
	case r.Status == lifecycle.Queued:
		return nil, newErr(ErrTransition, "agent '%s' is queued: send a message once its run ended", agentID)
	case r.Status.Live():
		return nil, newErr(ErrAlreadyRunning, "agent '%s' is running: send a message once its run ended (or answer what it asks)", agentID)
	case r.Status == lifecycle.Paused:
		return nil, newErr(ErrTransition, "agent '%s' is paused: resume it, or send a message once it ended", agentID)
	}
	if err := e.prestart(ctx, a, "resume"); err != nil {
		return nil, err
	}
	if err := notResumable(r); err != nil {
		return nil, err
	}
	if err := e.update(a, func(r *store.Record) { r.ResumePrompt = msg }); err != nil {
		return nil, err
	}
	by := "user"
	if c := hook.CallerOf(ctx); c != nil {
		by = c.AgentID
	}
	e.appendEvent(projectID, store.Event{Time: e.clock.Now().UTC(), Event: "message", AgentID: agentID,
		Data: map[string]any{"message": msg, "by": by, "sessionId": r.SessionID}})
	if err := e.launch(a, actResume); err != nil {
		_ = e.update(a, func(r *store.Record) { r.ResumePrompt = "" })
		return nil, err
	}
	return e.snapshot(a), nil
}
