// Package needsyou is what brings an agent to the user (SPEC "Attention"),
// hung on the core's lifecycle:
//
//   - Waiting: a Claude Code agent says, through the hooks Shepherd installs
//     (Args adds them to its run), when it waits for a permission or for
//     input and when an API error ended its turn; its stream-json log says
//     when an API call is retried for a rate limit (FollowLog). A waiting
//     agent reads `waiting: …`, goes to Needs you with a notification when
//     the user has something to do, and is never stale: its silence is not
//     a hang. An agent's hooks are rate-limited (Allow).
//   - Acknowledgment (Ack): the user has seen what the agent needed of them;
//     it leaves Needs you until it needs them again — a new failure brings
//     it back (Transition), but the next crash of a crash loop the user
//     acknowledged, ending the way they saw it end, does not.
//
// Why a record needs the user is package attention's (Reason).
package needsyou

import (
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"

	"shepherd/backend/attention"
	"shepherd/backend/claudehooks"
	"shepherd/backend/lifecycle"
	"shepherd/backend/loganalysis"
	"shepherd/backend/logtail"
	"shepherd/backend/notify"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/errs"
	"shepherd/backend/supervisor/hook"
)

// Core is what the attention needs of the engine's core.
type Core interface {
	Clock() clockwork.Clock
	Event(projectID string, ev store.Event)
	Notify(n notify.Notification)
	NotifyNative(projectID string) bool
	// APIAddress is where the engine's API listens ("" if nowhere an agent
	// can reach: no hooks then).
	APIAddress() string
	Agent(projectID, agentID string) (hook.Agent, error)
	// Under the agent's lock: a change of fields; the record as callers
	// see it.
	Update(a hook.Agent, mut func(*store.Record)) error
	Snapshot(a hook.Agent) *store.Record
	// Live is the wait of a's run and its log while it runs (a's lock is
	// held); false when it does not run.
	Live(a hook.Agent) (w *Wait, logPath string, ok bool)
	// WaitChanged tells the core that a's wait began (began) or ended, so
	// that it shows the agent's activity again (a's lock is held).
	WaitChanged(a hook.Agent, began bool)
}

// Needs hangs the attention on the core.
type Needs struct {
	core   Core
	log    zerolog.Logger
	limits limits
}

// New returns the attention over core.
func New(core Core, log zerolog.Logger) *Needs { return &Needs{core: core, log: log} }

// Wait is what a run waits for (from its hooks or its log), under its
// agent's lock; the zero Wait waits for nothing.
type Wait struct {
	w       *claudehooks.Waiting
	logSize int64 // the log's size when the wait began: only what is written after says the agent went on
}

// What is what the run waits for; nil: nothing.
func (w *Wait) What() *claudehooks.Waiting { return w.w }

// Reason is why the snapshot r needs the user (Record.Attention).
func Reason(r *store.Record, now time.Time) string { return attention.Reason(r, now) }

// Args adds Claude Code's hooks (claudehooks.Settings) to a Claude Code
// agent's arguments for this run, so that it tells the engine when it waits
// for the user. Not stored in the record: the user's args stay theirs. An
// agent whose args give their own --settings keeps them (the CLI takes one),
// and so does one started with no API to report to.
func (n *Needs) Args(r *store.Record, args []string) []string {
	return WithHooks(r, args, n.core.APIAddress())
}

// WithHooks is Args with the API's address given.
func WithHooks(r *store.Record, args []string, apiURL string) []string {
	if r.Profile != store.ProfileClaudeJSON || apiURL == "" || claudehooks.HasSettings(args) {
		return args
	}
	out := make([]string, 0, len(args)+2)
	i := 0
	for ; i < len(args) && args[i] != "--"; i++ {
		out = append(out, args[i])
	}
	out = append(out, "--settings", claudehooks.Settings(apiURL))
	return append(out, args[i:]...)
}

// Hook takes one hook input posted by an agent (its own credential says
// which). A hook from a run that has ended changes nothing.
func (n *Needs) Hook(projectID, agentID string, body []byte) error {
	in, err := claudehooks.Parse(body)
	if err != nil {
		return errs.New(errs.Validation, "%v", err)
	}
	a, err := n.core.Agent(projectID, agentID)
	if err != nil {
		return err
	}
	a.Lock()
	defer a.Unlock()
	w, logPath, ok := n.core.Live(a)
	r := a.Rec()
	if a.Gone() || !ok || r.Status != lifecycle.Running {
		return nil
	}
	now := n.core.Clock().Now()
	v := claudehooks.Judge(in, now, claudehooks.Interactive(r.Args))
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
	if w.w != nil && w.w.Held {
		v.Wait, v.Clear = nil, false // a question to Shepherd's permission tool ends with its answer
	}
	switch {
	case v.Wait != nil:
		data["waiting"] = v.Wait.What
		n.core.Event(r.ProjectID, store.Event{Time: now.UTC(), Event: "waiting", AgentID: r.ID, Reason: v.Wait.What, Data: data})
		n.set(a, w, logPath, v.Wait)
	case v.Clear:
		n.core.Event(r.ProjectID, store.Event{Time: now.UTC(), Event: "hook", AgentID: r.ID, Data: data})
		n.clear(a, w)
	default:
		n.core.Event(r.ProjectID, store.Event{Time: now.UTC(), Event: "hook", AgentID: r.ID, Data: data})
	}
	if v.Failure != "" {
		n.core.Event(r.ProjectID, store.Event{Time: now.UTC(), Event: "api-error", AgentID: r.ID, Reason: v.Failure})
	}
	return nil
}

// set records what the agent waits for; a new wait for the user brings it
// back to Needs you (an acknowledgement is for what came before) and
// notifies. a's lock is held.
func (n *Needs) set(a hook.Agent, w *Wait, logPath string, what *claudehooks.Waiting) {
	prev := w.w
	w.w = what
	// What the log holds now was written before the wait; only what is
	// written after it says the agent went on.
	w.logSize = logtail.Size(logPath)
	r := a.Rec()
	if what.NeedsYou && r.AcknowledgedAt != nil {
		if err := n.core.Update(a, func(r *store.Record) { r.AcknowledgedAt = nil }); err != nil {
			n.log.Warn().Err(err).Str("agent", r.ID).Msg("cannot record that the agent needs the user again")
		}
	}
	same := prev != nil && prev.What == what.What
	if what.NeedsYou && !same {
		n.core.Notify(notify.Notification{Level: notify.Warning, Kind: notify.KindWaiting, Title: "Agent waiting for you",
			ProjectID: r.ProjectID, AgentID: r.ID, Native: n.core.NotifyNative(r.ProjectID),
			Message: fmt.Sprintf("Agent %s is waiting: %s", r.ID, what.What)})
	}
	n.core.WaitChanged(a, true)
}

// clear: the agent went on. a's lock is held.
func (n *Needs) clear(a hook.Agent, w *Wait) {
	if w.w == nil {
		return
	}
	w.w = nil
	n.core.WaitChanged(a, false)
}

// FollowLog brings a's wait up to date with its log: an api_retry for a
// rate limit (retry, the latest line) is `waiting: rate limit until …`; the
// log growing past its size when the wait began ends it (the agent went
// on). a's lock is held.
func (n *Needs) FollowLog(a hook.Agent, w *Wait, logPath string, retry *loganalysis.Retry, grew bool) {
	now := n.core.Clock().Now()
	if retry != nil && retry.RateLimited() && (w.w == nil || !w.w.Held) {
		until := now.Add(time.Duration(retry.RetryDelayMs) * time.Millisecond)
		if cur := w.w; cur == nil || cur.Kind != claudehooks.WaitRateLimit || cur.Until == nil || !cur.Until.Equal(until) {
			why := "rate_limit"
			if retry.Error == "overloaded" || retry.ErrorStatus == 529 {
				why = "overloaded"
			}
			rl := claudehooks.RateLimit(why, now, &until)
			if w.w == nil || w.w.Kind != claudehooks.WaitRateLimit {
				r := a.Rec()
				n.core.Event(r.ProjectID, store.Event{Time: now.UTC(), Event: "waiting", AgentID: r.ID, Reason: rl.What,
					Data: map[string]any{"attempt": retry.Attempt, "retryDelayMs": retry.RetryDelayMs, "error": retry.Error}})
			}
			n.set(a, w, logPath, rl)
		}
		return
	}
	if w.w != nil && !w.w.Held && grew && logtail.Size(logPath) > w.logSize {
		n.clear(a, w)
	}
}

// Hold makes a's run wait on what (Held: a question to Shepherd's
// permission tool, which only its answer ends), or, with what nil, ends
// such a wait. False when a does not run. a's lock is held.
func (n *Needs) Hold(a hook.Agent, what *claudehooks.Waiting) bool {
	w, logPath, ok := n.core.Live(a)
	if !ok {
		return false
	}
	if what == nil {
		if w.w != nil && w.w.Held {
			n.clear(a, w)
		}
		return true
	}
	what.Held = true
	n.set(a, w, logPath, what)
	return true
}
