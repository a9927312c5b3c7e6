package supervisor

import (
	"context"

	"shepherd/backend/lifecycle"
)

// Who asks: the API marks a request made with an agent's own credential
// (AsAgent), so that the engine can refuse what only the user may do even
// on an agent the caller owns — answering a budget pause.

type callerKey struct{}

// AsAgent marks ctx as a request of the agent ref (from its credential,
// never from what it says).
func AsAgent(ctx context.Context, ref AgentRef) context.Context {
	return context.WithValue(ctx, callerKey{}, ref)
}

// agentCaller is the agent ctx is a request of; nil for the user.
func agentCaller(ctx context.Context) *AgentRef {
	if ref, ok := ctx.Value(callerKey{}).(AgentRef); ok {
		return &ref
	}
	return nil
}

// budgetAnswer refuses an agent's start, resume or unpause (verb) of an
// agent paused by a budget: only the user answers a budget pause (SPEC,
// threat model: a box's figures are claims, and its creator must not wave
// them through). a.mu is held.
func budgetAnswer(ctx context.Context, a *agent, verb string) error {
	c := agentCaller(ctx)
	if c == nil || a.rec.Status != lifecycle.Paused || a.rec.BudgetPause == "" {
		return nil
	}
	note := a.rec.PauseNote
	if note == "" {
		note = a.rec.BudgetPause + " budget"
	}
	return newErr(ErrPermissionDenied, "agent '%s' cannot %s '%s': it was paused by a budget (%s), and only the user answers a budget pause",
		c.AgentID, verb, a.rec.ID, note)
}
