package supervisor

import (
	"sync"
	"time"
)

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

type hookLimits struct {
	mu      sync.Mutex // a leaf
	buckets map[AgentRef]*hookBucket
}

type hookBucket struct {
	tokens float64
	at     time.Time // engine clock: when tokens was counted
}

// AllowHook takes a token of ref's bucket, or says (TooManyRequests) that
// ref posts hooks faster than it may.
func (e *Engine) AllowHook(ref AgentRef) error {
	now := e.clock.Now()
	l := &e.hookLimit
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buckets == nil {
		l.buckets = map[AgentRef]*hookBucket{}
	}
	b := l.buckets[ref]
	if b == nil {
		b = &hookBucket{tokens: HookBurst, at: now}
		l.buckets[ref] = b
	}
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(HookBurst, b.tokens+d.Seconds()*HookRate)
	}
	b.at = now
	if b.tokens < 1 {
		return newErr(ErrTooMany, "agent '%s' posts hooks faster than %d at once and %g a second: this one is refused", ref.AgentID, HookBurst, HookRate)
	}
	b.tokens--
	return nil
}

// forgetHooks drops a removed agent's bucket.
func (e *Engine) forgetHooks(ref AgentRef) {
	e.hookLimit.mu.Lock()
	delete(e.hookLimit.buckets, ref)
	e.hookLimit.mu.Unlock()
}
