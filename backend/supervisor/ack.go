package supervisor

import (
	"shepherd/backend/attention"
	"shepherd/backend/store"
)

// AckAgent records that the user has seen what the agent needed of them (a
// failure, silence, a restart loop): it leaves Needs you and the counts,
// stays in the history (events.jsonl), and comes back when the agent needs
// the user again. An agent that needs nothing cannot be acknowledged.
func (e *Engine) AckAgent(projectID, agentID string) (*store.Record, error) {
	_, a, err := e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gone() {
		return nil, errGone(agentID)
	}
	now := e.clock.Now()
	snap := e.snapshot(a)
	if !attention.Acknowledgeable(snap, now) {
		return nil, newErr(ErrValidation, "Agent '%s' needs nothing of you (it is %s): nothing to acknowledge", agentID, a.rec.Status)
	}
	if a.rec.AcknowledgedAt != nil {
		return e.snapshot(a), nil
	}
	why := attention.Reason(snap, now)
	now = now.UTC()
	loop := ""
	if attention.InCrashLoop(snap) {
		// The loop stays acknowledged while it goes on the same way.
		loop = ackLoopUnknown
		if !a.rec.Status.Live() && a.rec.ExitReason != "" {
			loop = loopEnd(a.rec)
		}
	}
	if err := e.update(a, func(r *store.Record) { r.AcknowledgedAt, r.AckLoop = &now, loop }); err != nil {
		return nil, err
	}
	e.appendEvent(projectID, store.Event{Time: now, Event: "attention:acknowledged", AgentID: agentID, Reason: why})
	return e.snapshot(a), nil
}
