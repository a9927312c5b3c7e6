// Package hook is what the engine's core (package supervisor) and the
// features around it share: the handle by which a feature sees one agent.
//
// The core owns the agents, their runs and their records, and the one
// function that changes a status; it calls each feature at the points of
// an agent's lifecycle where the feature hangs — before a start (may it
// start? with which arguments?), at a run's result line, at its end, at a
// project's load, on each watchdog pass — the way a task runner calls its
// hooks. A feature keeps its own state (a project's queue and pause, a run's
// wait, its samples) and reaches back into the core only through the narrow
// interface it declares itself (its Core).
package hook

import (
	"context"

	"shepherd/backend/store"
)

// Agent is one agent as a feature sees it. Its record is read and changed
// only while its lock is held: the core holds it when it hands an agent to
// a hook; a feature that picks an agent itself (a queue releasing its
// first) takes the lock.
type Agent interface {
	Lock()
	Unlock()
	// Rec is the agent's record; under the lock, and not kept past it.
	Rec() *store.Record
	// Gone reports whether the agent was removed (or the engine is
	// closing): nothing is written or started for it any more.
	Gone() bool
}

// Who asks: the API marks a request made with an agent's own credential
// (AsAgent), so that the engine can refuse what only the user may do even
// on an agent the caller owns — answering a budget pause.

type callerKey struct{}

// Caller is an agent that asks (from its credential, never from what it
// says).
type Caller struct{ ProjectID, AgentID string }

// AsAgent marks ctx as a request of the agent c.
func AsAgent(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf is the agent ctx is a request of; nil for the user.
func CallerOf(ctx context.Context) *Caller {
	if c, ok := ctx.Value(callerKey{}).(Caller); ok {
		return &c
	}
	return nil
}
