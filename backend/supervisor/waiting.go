package supervisor

import (
	"fmt"
	"time"

	"shepherd/backend/attention"
	"shepherd/backend/claudehooks"
	"shepherd/backend/lifecycle"
	"shepherd/backend/logtail"
	"shepherd/backend/notify"
	"shepherd/backend/store"
)

// Waiting for the user (SPEC "Attention"): a Claude Code agent says, through
// the hooks Shepherd installs, when it waits for a permission or for input
// and when an API error ended its turn; its stream-json log says when an API
// call is retried for a rate limit. A waiting agent reads `waiting: …`, goes
// to Needs you with a notification when the user has something to do, and
// is never stale: its silence is not a hang.

// Hook takes one hook input posted by the agent ref (its own credential
// says who it is). A hook from a run that has ended changes nothing.
func (e *Engine) Hook(ref AgentRef, body []byte) error {
	in, err := claudehooks.Parse(body)
	if err != nil {
		return newErr(ErrValidation, "%v", err)
	}
	_, a, err := e.agent(ref.ProjectID, ref.AgentID)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	rn := a.run
	if a.gone() || rn == nil || a.rec.Status != lifecycle.Running {
		return nil
	}
	now := e.clock.Now()
	v := claudehooks.Judge(in, now, claudehooks.Interactive(a.rec.Args))
	data := map[string]any{"hook": in.Event}
	if in.NotificationType != "" {
		data["notificationType"] = in.NotificationType
	}
	if in.ToolName != "" {
		data["tool"] = in.ToolName
	}
	if in.Error != "" {
		data["error"] = in.Error
	}
	if rn.waiting != nil && rn.waiting.Held {
		v.Wait, v.Clear = nil, false // a question to Shepherd ends with its answer
	}
	switch {
	case v.Wait != nil:
		data["waiting"] = v.Wait.What
		e.appendEvent(a.rec.ProjectID, store.Event{Time: now.UTC(), Event: "waiting", AgentID: a.rec.ID, Reason: v.Wait.What, Data: data})
		e.setWaiting(a, rn, v.Wait)
	case v.Clear:
		e.appendEvent(a.rec.ProjectID, store.Event{Time: now.UTC(), Event: "hook", AgentID: a.rec.ID, Data: data})
		e.clearWaiting(a, rn)
	default:
		e.appendEvent(a.rec.ProjectID, store.Event{Time: now.UTC(), Event: "hook", AgentID: a.rec.ID, Data: data})
	}
	if v.Failure != "" {
		e.appendEvent(a.rec.ProjectID, store.Event{Time: now.UTC(), Event: "api-error", AgentID: a.rec.ID, Reason: v.Failure})
	}
	return nil
}

// setWaiting records what the agent waits for; a new wait for the user
// brings it back to Needs you (an acknowledgement is for what came before)
// and notifies. a.mu is held.
func (e *Engine) setWaiting(a *agent, rn *run, w *claudehooks.Waiting) {
	prev := rn.waiting
	rn.waiting = w
	// What the log holds now was written before the wait; only what is
	// written after it says the agent went on.
	rn.waitingLogSize = logtail.Size(rn.logPath)
	rn.notBusy()
	if w.NeedsYou && a.rec.AcknowledgedAt != nil {
		_ = e.update(a, func(r *store.Record) { r.AcknowledgedAt = nil })
	}
	same := prev != nil && prev.What == w.What
	if w.NeedsYou && !same {
		s := e.settingsOf(a.rec.ProjectID)
		e.notify(notify.Notification{Level: notify.Warning, Kind: notify.KindWaiting, Title: "Agent waiting for you",
			ProjectID: a.rec.ProjectID, AgentID: a.rec.ID, Native: s.NotifyNative,
			Message: fmt.Sprintf("Agent %s is waiting: %s", a.rec.ID, w.What)})
	}
	e.showActivity(a, rn)
}

// clearWaiting: the agent went on. a.mu is held.
func (e *Engine) clearWaiting(a *agent, rn *run) {
	if rn.waiting == nil {
		return
	}
	rn.waiting = nil
	e.showActivity(a, rn)
}

// retrying reports whether the run's log says an API call is being retried.
func (rn *run) retrying() bool {
	rn.scanMu.Lock()
	defer rn.scanMu.Unlock()
	return rn.retry != nil
}

// followWaiting brings the wait up to date with the log: an api_retry for a
// rate limit is `waiting: rate limit until …`; the log growing past its
// size when the wait began ends it (the agent went on). a.mu is held.
func (e *Engine) followWaiting(a *agent, rn *run, grew bool) {
	rn.scanMu.Lock()
	retry := rn.retry
	rn.scanMu.Unlock()
	now := e.clock.Now()
	if retry != nil && retry.RateLimited() && (rn.waiting == nil || !rn.waiting.Held) {
		until := now.Add(time.Duration(retry.RetryDelayMs) * time.Millisecond)
		if w := rn.waiting; w == nil || w.Kind != claudehooks.WaitRateLimit || w.Until == nil || !w.Until.Equal(until) {
			err := "rate_limit"
			if retry.Error == "overloaded" || retry.ErrorStatus == 529 {
				err = "overloaded"
			}
			w := claudehooks.RateLimit(err, now, &until)
			if rn.waiting == nil || rn.waiting.Kind != claudehooks.WaitRateLimit {
				e.appendEvent(a.rec.ProjectID, store.Event{Time: now.UTC(), Event: "waiting", AgentID: a.rec.ID, Reason: w.What,
					Data: map[string]any{"attempt": retry.Attempt, "retryDelayMs": retry.RetryDelayMs, "error": retry.Error}})
			}
			e.setWaiting(a, rn, w)
		}
		return
	}
	if rn.waiting != nil && !rn.waiting.Held && grew && logtail.Size(rn.logPath) > rn.waitingLogSize {
		e.clearWaiting(a, rn)
	}
}

// attentionOf is why the snapshot r needs the user (Record.Attention).
func (e *Engine) attentionOf(r *store.Record) string { return attention.Reason(r, e.clock.Now()) }
