package supervisor

import (
	"context"
	"strings"

	"shepherd/backend/store"
)

const sessionPlaceholder = "{sessionId}"

// resumable reports whether r can be resumed: it has resume arguments and,
// when they name {sessionId}, a session id.
func resumable(r *store.Record) bool {
	return len(r.ResumeArgs) > 0 && (r.SessionID != "" || !usesSession(r.ResumeArgs))
}

func usesSession(args []string) bool {
	for _, a := range args {
		if strings.Contains(a, sessionPlaceholder) {
			return true
		}
	}
	return false
}

// resumeArgs fills the template with the record's session id.
func resumeArgs(r *store.Record) []string {
	out := make([]string, len(r.ResumeArgs))
	for i, a := range r.ResumeArgs {
		out[i] = strings.ReplaceAll(a, sessionPlaceholder, r.SessionID)
	}
	return out
}

// ResumeAgent runs the agent's command with its resume arguments (session
// id filled in) in its own cwd and env. A manual resume resets the
// auto-resume count.
func (e *Engine) ResumeAgent(ctx context.Context, projectID, agentID string) (*store.Record, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rec.Status.Live() {
		return nil, errAlreadyRunning(agentID)
	}
	if err := budgetAnswer(ctx, a, "resume"); err != nil {
		return nil, err
	}
	if err := notResumable(a.rec); err != nil {
		return nil, err
	}
	if err := e.launch(a, actResume); err != nil {
		return nil, err
	}
	return e.snapshot(a), nil
}

func notResumable(r *store.Record) error {
	switch {
	case len(r.ResumeArgs) == 0:
		return newErr(ErrNotResumable, "Process '%s' cannot be resumed: it has no resume arguments", r.ID)
	case usesSession(r.ResumeArgs) && r.SessionID == "":
		return newErr(ErrNotResumable, "Process '%s' cannot be resumed: no session id is known yet", r.ID)
	}
	return nil
}
