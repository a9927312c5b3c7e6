package supervisor

import (
	"context"
	"strings"

	"shepherd/backend/loganalysis"
	"shepherd/backend/store"
)

const sessionPlaceholder = "{sessionId}"

// promptPlaceholder, in resume arguments, is where the prompt of a resume
// goes: the instruction of a resume that brings one (resolve a merge's
// conflicts, AskToResolve), else defaultResumePrompt.
const (
	promptPlaceholder   = "{prompt}"
	defaultResumePrompt = "continue"
)

// resumable reports whether r can be resumed: it has resume arguments and,
// when they name {sessionId}, a session id its CLI gives.
func resumable(r *store.Record) bool { return notResumable(r) == nil }

func usesSession(args []string) bool {
	for _, a := range args {
		if strings.Contains(a, sessionPlaceholder) {
			return true
		}
	}
	return false
}

// resumeArgs fills the template with the record's session id and the
// prompt of the resume: r.ResumePrompt when one is pending (an
// instruction), in place of {prompt} — or, for a Claude Code or Codex
// agent, whose resume arguments end with their prompt (the presets'), in
// place of that last argument.
func resumeArgs(r *store.Record) []string {
	out := make([]string, len(r.ResumeArgs))
	placeholder := false
	prompt := r.ResumePrompt
	if prompt == "" {
		prompt = defaultResumePrompt
	}
	for i, a := range r.ResumeArgs {
		placeholder = placeholder || strings.Contains(a, promptPlaceholder)
		out[i] = strings.ReplaceAll(strings.ReplaceAll(a, sessionPlaceholder, r.SessionID), promptPlaceholder, prompt)
	}
	if !placeholder && r.ResumePrompt != "" && store.Structured(r.Profile) && len(out) > 0 {
		if last := r.ResumeArgs[len(r.ResumeArgs)-1]; strings.Contains(last, sessionPlaceholder) {
			out = append(out, r.ResumePrompt)
		} else {
			out[len(out)-1] = r.ResumePrompt
		}
	}
	return out
}

// canInstruct reports whether a resume of r can bring an instruction: its
// resume arguments have {prompt}, or it is a Claude Code or Codex agent.
func canInstruct(r *store.Record) bool {
	if store.Structured(r.Profile) && len(r.ResumeArgs) > 0 {
		return true
	}
	for _, a := range r.ResumeArgs {
		if strings.Contains(a, promptPlaceholder) {
			return true
		}
	}
	return false
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
	if err := e.prestart(ctx, a, "resume"); err != nil {
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

// notResumable says why r cannot be resumed (nil: it can). A session id
// that is not one its CLI gives (a record written by hand, or by an older
// engine that kept what the log said) never reaches the command line.
func notResumable(r *store.Record) error {
	switch {
	case len(r.ResumeArgs) == 0:
		return newErr(ErrNotResumable, "Process '%s' cannot be resumed: it has no resume arguments", r.ID)
	case !usesSession(r.ResumeArgs):
		return nil
	case r.SessionID == "":
		return newErr(ErrNotResumable, "Process '%s' cannot be resumed: no session id is known yet", r.ID)
	}
	if err := loganalysis.CheckSessionID(r.SessionID); err != nil {
		return newErr(ErrNotResumable, "Process '%s' cannot be resumed: its %v", r.ID, err)
	}
	return nil
}
