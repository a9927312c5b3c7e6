package supervisor

import (
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
)

// Run is one run of an agent, as the project's events tell it: when and why
// it started, its session, where its lines begin in the log, and how it
// ended.
type Run struct {
	N         int       `json:"n" doc:"1-based, in the order the runs started"`
	StartedAt time.Time `json:"startedAt"`
	// Why it started: start, resume, auto-resume, keep-alive restart, …
	Reason    string `json:"reason" doc:"why it started: start, resume, auto-resume, keep-alive restart, …"`
	SessionID string `json:"sessionId,omitempty" doc:"the session it ran in, once its output said"`
	LogOffset *int64 `json:"logOffset,omitempty" doc:"the byte offset in agent.log of its first line"`
	// How it ended; absent while it runs (or when its end was not kept).
	EndedAt    *time.Time `json:"endedAt,omitempty"`
	End        string     `json:"end,omitempty" doc:"the status it ended in: completed, failed, stopped, interrupted, paused"`
	ExitReason string     `json:"exitReason,omitempty"`
	ExitCode   *int       `json:"exitCode,omitempty"`
}

// Runs lists an agent's runs, oldest first, from the project's events (as
// many as the kept events hold).
func (e *Engine) Runs(projectID, agentID string) ([]Run, error) {
	if _, err := e.GetAgent(projectID, agentID); err != nil {
		return nil, err
	}
	evs, err := e.Events(projectID, agentID, 0)
	if err != nil {
		return nil, err
	}
	return runsOf(evs), nil
}

// runsOf folds an agent's events, oldest first, into its runs: a run begins
// where the agent went from spawning to running and ends at its next end
// state; a session event names the session of the run under way.
func runsOf(evs []store.Event) []Run {
	runs := []Run{}
	current := func() *Run {
		if n := len(runs); n > 0 && runs[n-1].EndedAt == nil {
			return &runs[n-1]
		}
		return nil
	}
	for _, ev := range evs {
		switch {
		case ev.Event == "session":
			if r := current(); r != nil {
				if sid, _ := ev.Data["sessionId"].(string); sid != "" {
					r.SessionID = sid
				}
			}
		case ev.Event != "transition":
		case ev.From == string(lifecycle.Spawning) && ev.To == string(lifecycle.Running):
			r := Run{N: len(runs) + 1, StartedAt: ev.Time, Reason: ev.Reason}
			if off, ok := number(ev.Data["logOffset"]); ok {
				r.LogOffset = &off
			}
			runs = append(runs, r)
		case lifecycle.Status(ev.To).Terminal():
			if r := current(); r != nil {
				at := ev.Time
				r.EndedAt, r.End = &at, ev.To
				r.ExitReason, _ = ev.Data["exitReason"].(string)
				if c, ok := number(ev.Data["exitCode"]); ok {
					code := int(c)
					r.ExitCode = &code
				}
			}
		}
	}
	return runs
}

// number is a number of an event's data, as JSON decoding or the engine's
// own writing left it.
func number(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		return int64(n), true
	case int64:
		return n, true
	case int:
		return int64(n), true
	}
	return 0, false
}
