package supervisor

import (
	"context"

	"shepherd/backend/store"
	"shepherd/backend/supervisor/hook"
)

// The points of an agent's lifecycle where the features hang (package
// hook), as a task runner calls its hooks. Each feature implements those it
// needs; the core calls every one registered (Engine.hooks, in order) at
// its point. The features' own operations (a budget's answer, a merge, a
// look at the stats) are theirs, behind the Engine's methods of the same
// name.
type (
	// prestartHook may refuse a start, resume or unpause (verb) of the
	// agent whose record is r, asked with ctx (who asks: hook.CallerOf).
	prestartHook interface {
		Prestart(ctx context.Context, r *store.Record, verb string) error
	}
	// argsHook adds to what a run of r is given (after the user's args).
	argsHook interface {
		Args(r *store.Record, args []string) []string
	}
	// runEndHook is told that a's run ended and was recorded (a's lock is
	// held; what takes long goes to a task).
	runEndHook interface{ RunEnded(a hook.Agent) }
	// loadHook is told a project was loaded: its agents, synced with
	// reality.
	loadHook interface{ Load(agents []hook.Agent) }
)

// prestart asks every prestart hook. a.mu is held.
func (e *Engine) prestart(ctx context.Context, a *agent, verb string) error {
	for _, h := range e.hooks {
		if x, ok := h.(prestartHook); ok {
			if err := x.Prestart(ctx, a.rec, verb); err != nil {
				return err
			}
		}
	}
	return nil
}

// runArgs is args with what every args hook adds.
func (e *Engine) runArgs(r *store.Record, args []string) []string {
	for _, h := range e.hooks {
		if x, ok := h.(argsHook); ok {
			args = x.Args(r, args)
		}
	}
	return args
}

// runEnded tells every run-end hook. a.mu is held.
func (e *Engine) runEnded(a *agent) {
	for _, h := range e.hooks {
		if x, ok := h.(runEndHook); ok {
			x.RunEnded(a)
		}
	}
}

// loadHooks tells every load hook that p was loaded.
func (e *Engine) loadHooks(p *project) {
	agents := agentsOf(p)
	for _, h := range e.hooks {
		if x, ok := h.(loadHook); ok {
			x.Load(agents)
		}
	}
}
