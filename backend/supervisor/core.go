package supervisor

import (
	"time"

	"github.com/jonboulle/clockwork"

	"shepherd/backend/lifecycle"
	"shepherd/backend/notify"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/hook"
)

// core is what the features around the core (packages stats, budget,
// needsyou, queue, worktrees) may ask of it: each declares the few methods
// it needs as its own Core interface, and core has them all.
type core struct{ e *Engine }

func (c core) Clock() clockwork.Clock { return c.e.clock }

// After runs f after d on the engine's clock as one of its tasks.
func (c core) After(d time.Duration, f func()) { c.e.after(c.e.ctx, d, f) }

// Go runs f as one of the engine's tasks; false once it is closing.
func (c core) Go(f func()) bool { return c.e.goTask(f) }

func (c core) Emit(event string, data any) { c.e.emit(event, data) }

func (c core) Event(projectID string, ev store.Event) { c.e.appendEvent(projectID, ev) }

func (c core) Notify(n notify.Notification) { c.e.notify(n) }

// NotifyNative says whether a project's notifications go to the desktop.
func (c core) NotifyNative(projectID string) bool { return c.e.settingsOf(projectID).NotifyNative }

func (c core) ProjectName(projectID string) string { return c.e.projectName(projectID) }

// ProjectChanged pushes a project's state.
func (c core) ProjectChanged(projectID string) {
	if p := c.e.known(projectID); p != nil {
		c.e.emit(EventProjectState, c.e.view(p))
	}
}

// Agent is a known agent (its project loaded on first use).
func (c core) Agent(projectID, agentID string) (hook.Agent, error) {
	_, a, err := c.e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Update, Apply, Snapshot and Unpause are the core's own, for an agent
// whose lock the caller holds.

func (c core) Update(a hook.Agent, mut func(*store.Record)) error { return c.e.update(a.(*agent), mut) }

func (c core) Apply(a hook.Agent, to lifecycle.Status, reason string, mut func(*store.Record)) error {
	return c.e.apply(a.(*agent), to, reason, mut)
}

func (c core) Snapshot(a hook.Agent) *store.Record { return c.e.snapshot(a.(*agent)) }

func (c core) Unpause(a hook.Agent) error { return c.e.unpauseLocked(a.(*agent)) }
