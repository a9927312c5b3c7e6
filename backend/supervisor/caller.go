package supervisor

import (
	"context"

	"shepherd/backend/supervisor/hook"
)

// Who asks: the API marks a request made with an agent's own credential
// (AsAgent), so that the engine can refuse what only the user may do even
// on an agent the caller owns — answering a budget pause.

// AsAgent marks ctx as a request of the agent ref (from its credential,
// never from what it says).
func AsAgent(ctx context.Context, ref AgentRef) context.Context {
	return hook.AsAgent(ctx, hook.Caller{ProjectID: ref.ProjectID, AgentID: ref.AgentID})
}
