package supervisor

import (
	"time"

	"github.com/jonboulle/clockwork"
)

// core is what the features around the core (packages stats, budget,
// needsyou, queue, worktrees) may ask of it: each declares the few methods
// it needs as its own Core interface, and core has them all.
type core struct{ e *Engine }

func (c core) Clock() clockwork.Clock { return c.e.clock }

// After runs f after d on the engine's clock as one of its tasks.
func (c core) After(d time.Duration, f func()) { c.e.after(c.e.ctx, d, f) }

func (c core) Emit(event string, data any) { c.e.emit(event, data) }
