package supervisor

import (
	"shepherd/backend/store"
	"shepherd/backend/supervisor/hook"
	"shepherd/backend/supervisor/needsyou"
)

// What brings an agent to the user — waits, acknowledgments, the hooks'
// rate limit — is package needsyou's.

// An agent's hooks: HookBurst at once, HookRate a second after that.
const (
	HookBurst = needsyou.HookBurst
	HookRate  = needsyou.HookRate
)

// Hook takes one hook input posted by the agent ref (its own credential
// says who it is). A hook from a run that has ended changes nothing.
func (e *Engine) Hook(ref AgentRef, body []byte) error {
	return e.needs.Hook(ref.ProjectID, ref.AgentID, body)
}

// AllowHook takes a token of ref's bucket, or says (TooManyRequests) that
// ref posts hooks faster than it may.
func (e *Engine) AllowHook(ref AgentRef) error { return e.needs.Allow(ref.ProjectID, ref.AgentID) }

// AckAgent records that the user has seen what the agent needed of them: it
// leaves Needs you until it needs them again.
func (e *Engine) AckAgent(projectID, agentID string) (*store.Record, error) {
	return e.needs.Ack(projectID, agentID)
}

// APIAddress is where the engine's API listens, told to agents.
func (c core) APIAddress() string { return c.e.apiAddress() }

// Live is the wait of a's run and its log while a run is watched.
func (c core) Live(x hook.Agent) (*needsyou.Wait, string, bool) {
	a := x.(*agent)
	if a.run == nil {
		return nil, "", false
	}
	return &a.run.wait, a.run.logPath, true
}

// WaitChanged shows a's activity again: a wait began (what was measured of
// its silence no longer counts) or ended.
func (c core) WaitChanged(x hook.Agent, began bool) {
	a := x.(*agent)
	rn := a.run
	if rn == nil {
		return
	}
	if began {
		rn.notBusy()
	}
	c.e.showActivity(a, rn)
}
