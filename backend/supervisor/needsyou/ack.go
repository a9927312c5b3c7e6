package needsyou

import (
	"fmt"
	"sync"
	"time"

	"shepherd/backend/attention"
	"shepherd/backend/lifecycle"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/errs"
)

// Ack records that the user has seen what the agent needed of them (a
// failure, silence, a restart loop): it leaves Needs you and the counts,
// stays in the history (events.jsonl), and comes back when the agent needs
// the user again. An agent that needs nothing cannot be acknowledged.
func (n *Needs) Ack(projectID, agentID string) (*store.Record, error) {
	a, err := n.core.Agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	a.Lock()
	defer a.Unlock()
	if a.Gone() {
		return nil, errs.Gone(agentID)
	}
	r := a.Rec()
	now := n.core.Clock().Now()
	snap := n.core.Snapshot(a)
	if !attention.Acknowledgeable(snap, now) {
		return nil, errs.New(errs.Validation, "Agent '%s' needs nothing of you (it is %s): nothing to acknowledge", agentID, r.Status)
	}
	if r.AcknowledgedAt != nil {
		return n.core.Snapshot(a), nil
	}
	why := attention.Reason(snap, now)
	now = now.UTC()
	loop := ""
	if attention.InCrashLoop(snap) {
		// The loop stays acknowledged while it goes on the same way.
		loop = ackLoopUnknown
		if !r.Status.Live() && r.ExitReason != "" {
			loop = LoopEnd(r)
		}
	}
	if err := n.core.Update(a, func(r *store.Record) { r.AcknowledgedAt, r.AckLoop = &now, loop }); err != nil {
		return nil, err
	}
	n.core.Event(projectID, store.Event{Time: now, Event: "attention:acknowledged", AgentID: agentID, Reason: why})
	return n.core.Snapshot(a), nil
}

// Transition is the attention's part of a transition to next (before it is
// written): a new failure needs the user again, whatever they
// acknowledged — but for the next crash of a crash loop they acknowledged,
// which ends the way they saw it end.
func Transition(next *store.Record) {
	if next.Status != lifecycle.Failed && next.Status != lifecycle.Interrupted {
		return
	}
	if !sameLoop(next) {
		next.AcknowledgedAt, next.AckLoop = nil, ""
	}
}

// QuietCrash reports whether next, a terminal transition, is a crash of a
// loop the user acknowledged (its event says so; it notifies nobody).
func QuietCrash(next *store.Record) bool {
	return next.AckLoop != "" && next.AcknowledgedAt != nil &&
		(next.Status == lifecycle.Failed || next.Status == lifecycle.Interrupted)
}

// LoopEnd is how a run of a crash loop ended, to tell the same loop from a
// changed one.
func LoopEnd(r *store.Record) string {
	code := ""
	if r.ExitCode != nil {
		code = fmt.Sprint(*r.ExitCode)
	}
	return string(r.ExitReason) + "/" + code + "/" + r.Signal
}

// sameLoop: next is the end of a run of the crash loop the user
// acknowledged, ending as it did then (the first end after an
// acknowledgment given mid-run sets how). It fills in AckLoop.
func sameLoop(next *store.Record) bool {
	if next.AcknowledgedAt == nil || next.AckLoop == "" || !next.KeepAlive || next.Desired != lifecycle.DesiredRunning {
		return false
	}
	end := LoopEnd(next)
	if next.AckLoop == ackLoopUnknown {
		next.AckLoop = end
	}
	return next.AckLoop == end
}

// ackLoopUnknown: acknowledged while a run of the loop was under way; its
// end says how the loop ends.
const ackLoopUnknown = "?"

// Hooks are rate-limited per agent (SPEC, threat model: a box cannot
// exhaust what the user needs): every hook an agent posts is a line in its
// project's events.jsonl, so an agent that posts in a loop would fill the
// disk. Claude Code posts a few a turn; a token bucket on the engine's clock
// lets HookBurst through at once and HookRate a second after that, and
// refuses the rest (429) before their body is even read.
const (
	HookBurst = 20
	HookRate  = 2.0 // hooks a second, sustained
)

type limits struct {
	mu      sync.Mutex // a leaf
	buckets map[[2]string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time // engine clock: when tokens was counted
}

// Allow takes a token of the agent's bucket, or says (TooMany) that it
// posts hooks faster than it may.
func (n *Needs) Allow(projectID, agentID string) error {
	now := n.core.Clock().Now()
	l := &n.limits
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buckets == nil {
		l.buckets = map[[2]string]*bucket{}
	}
	key := [2]string{projectID, agentID}
	b := l.buckets[key]
	if b == nil {
		b = &bucket{tokens: HookBurst, at: now}
		l.buckets[key] = b
	}
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(HookBurst, b.tokens+d.Seconds()*HookRate)
	}
	b.at = now
	if b.tokens < 1 {
		return errs.New(errs.TooMany, "agent '%s' posts hooks faster than %d at once and %g a second: this one is refused", agentID, HookBurst, HookRate)
	}
	b.tokens--
	return nil
}

// Forget drops a removed agent's bucket.
func (n *Needs) Forget(projectID, agentID string) {
	n.limits.mu.Lock()
	delete(n.limits.buckets, [2]string{projectID, agentID})
	n.limits.mu.Unlock()
}
