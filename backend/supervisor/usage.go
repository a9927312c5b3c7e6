package supervisor

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/logtail"
	"shepherd/backend/shim"
	"shepherd/backend/store"
	"shepherd/backend/supervisor/figures"
	"shepherd/backend/usagelimit"
)

// Usage limits (SPEC "Answers"): a Claude Code or Codex run refused by its
// account's subscription window (a rejected rate_limit_event, a 429 result
// naming its reset, Codex's usage-limit error) does not fail: the agent is
// paused, `usage limit until 14:00 (5-hour)` — calm, not in Needs you,
// never stale — and resumed in its session after the reset by the
// scheduler (package usagelimit): a few agents of one account at a time,
// and a second refusal right after a resumption waits for the next reset
// instead of looping.

type usageState struct {
	once     sync.Once
	sched    *usagelimit.Scheduler
	accounts usagelimit.Accounts // the windows runs reported, for the header
}

// UsageConfig tunes the scheduler (tests); zero: its defaults.
var UsageConfig usagelimit.Config

func (e *Engine) usageScheduler() *usagelimit.Scheduler {
	e.usage.once.Do(func() {
		e.usage.sched = usagelimit.NewScheduler(e.clock, UsageConfig, e.resumeAfterLimit)
	})
	return e.usage.sched
}

// usageTail is how much of the end of a log is read for a usage limit.
const usageTail = 256 << 10

// usageLimitOf reads whether the agent's run that just ended was refused by
// a usage limit that names its reset, and keeps what its lines said of its
// account's windows.
func (e *Engine) usageLimitOf(r *store.Record, now time.Time) (usagelimit.Limit, bool) {
	if !store.Structured(r.Profile) || r.LogPath == "" {
		return usagelimit.Limit{}, false
	}
	b, _, err := logtail.Last(r.LogPath, usageTail)
	if err != nil {
		return usagelimit.Limit{}, false
	}
	rd := usagelimit.NewReader()
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		if r.Profile == store.ProfileCodexJSON {
			rd.Codex(line, now, time.Local)
		} else {
			rd.Claude(line, now)
		}
	}
	if ws := rd.Windows(); len(ws) > 0 {
		e.usage.accounts.Observe(usageAccount(r), ws...)
	}
	l, ok := rd.Limit()
	if !ok || l.ResetsAt.IsZero() {
		return usagelimit.Limit{}, false
	}
	return l, true
}

// usageAccount is whose window it is: the CLI and its configuration folder.
func usageAccount(r *store.Record) string {
	if r.Profile == store.ProfileCodexJSON {
		return "codex:" + r.Env["CODEX_HOME"]
	}
	return "claude:" + r.Env["CLAUDE_CONFIG_DIR"]
}

func usageKey(r *store.Record) string { return r.ProjectID + "/" + r.ID }

// usageNote is the pause's words: "usage limit until 14:00 (5-hour)".
func usageNote(until time.Time, l usagelimit.Limit, now time.Time) string {
	t := until.Local()
	at := t.Format("15:04")
	if y, m, d := t.Date(); y != now.Local().Year() || m != now.Local().Month() || d != now.Local().Day() {
		at = t.Format("Jan 2 15:04")
	}
	s := "usage limit until " + at
	if lb := l.Label(); lb != "" {
		s += " (" + lb + ")"
	}
	return s
}

// endUsageRun records the end of a run refused by a usage limit: paused,
// waiting for the reset, its figures counted; false if it could not be
// recorded (the run then ends as it would). a.mu is held.
func (e *Engine) endUsageRun(a *agent, rn *run, st *shim.ExitStatus, l usagelimit.Limit) bool {
	now := e.clock.Now().UTC()
	until, err := e.usageScheduler().Wait(usageAccount(a.rec), usageKey(a.rec), l)
	if err != nil {
		return false
	}
	note := usageNote(until, l, now)
	var fig store.RunFigures
	counted := false
	data := map[string]any{"resetsAt": l.ResetsAt.UTC(), "until": until.UTC(), "window": l.Window, "kind": string(l.Kind)}
	err = e.applyNow(a, step{to: lifecycle.Stopping, reason: "usage limit"},
		step{to: lifecycle.Paused, reason: "usage limit", data: data, mut: func(r *store.Record) {
			r.ExitReason, r.Error = lifecycle.ReasonPaused, ""
			setExit(r, st, now)
			r.LastActivityAt = rn.activityAt()
			fig, counted = figures.Count(r, rn.resultNow(), now)
			u := until.UTC()
			r.PausedAt, r.PauseNote, r.PausedWithProject, r.UsageLimitUntil = &now, note, false, &u
			r.Desired = lifecycle.DesiredStopped
			r.QueueSeq, r.QueuedAction, r.QueuedFrom = 0, "", ""
		}})
	if err != nil {
		e.usageScheduler().Forget(usageKey(a.rec))
		return false
	}
	if counted {
		e.runCounted(a, fig)
	}
	e.endRun(a, rn)
	return true
}

// resumeAfterLimit resumes an agent whose account's window has reset, in
// its session, through the queue — unless it is no longer waiting for it
// (the user resumed, started or removed it).
func (e *Engine) resumeAfterLimit(w usagelimit.Waiting) {
	projectID, agentID, ok := strings.Cut(w.Agent, "/")
	if !ok {
		return
	}
	e.goTask(func() {
		_, a, err := e.agent(projectID, agentID)
		if err != nil {
			return
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.gone() || a.rec.Status != lifecycle.Paused || a.rec.UsageLimitUntil == nil {
			return
		}
		e.appendEvent(projectID, store.Event{Time: e.clock.Now().UTC(), Event: "usage-limit:resume", AgentID: agentID,
			Data: map[string]any{"account": w.Account, "refused": w.Refused}})
		if err := e.launch(a, actUnpause); err != nil {
			e.log.Warn().Err(err).Str("agent", agentID).Msg("resume after a usage limit")
		}
	})
}

// rewaitUsage puts the agents of a project loaded while paused by a usage
// limit back in line for their reset (the engine was restarted).
func (e *Engine) rewaitUsage(p *project) {
	for _, a := range p.list() {
		a.mu.Lock()
		r := a.rec
		if r.Status == lifecycle.Paused && r.UsageLimitUntil != nil {
			l := usagelimit.Limit{Kind: usagelimit.KindResult, ResetsAt: *r.UsageLimitUntil, Utilization: -1}
			if _, err := e.usageScheduler().Wait(usageAccount(r), usageKey(r), l); err != nil {
				e.log.Warn().Err(err).Str("agent", r.ID).Msg(fmt.Sprintf("usage limit: %v", err))
			}
		}
		a.mu.Unlock()
	}
}

// AccountUsage is what is known of one account's windows.
type AccountUsage struct {
	Account string              `json:"account"` // "claude:" or "codex:" and its configuration folder ("" : the default)
	Windows []usagelimit.Window `json:"windows"`
}

// Usage is every account's windows as the runs that ended last said them
// (a window whose reset has passed reads fresh), for the header.
func (e *Engine) Usage() []AccountUsage {
	now := e.clock.Now()
	var out []AccountUsage
	for _, acct := range e.usage.accounts.Names() {
		out = append(out, AccountUsage{Account: acct, Windows: e.usage.accounts.Windows(acct, now)})
	}
	return out
}
