// Package figures is what runs cost (SPEC "Figures from the log"): the
// latest run's turns, duration, tokens and cost are kept on the record
// (lastResult) and summed per agent (totals) across runs and resumes, and
// per project; each run is counted once, when its end is recorded, from the
// result line the engine read while it ran (or, for a run that ended while
// the engine was away, from the log's tail). Every counted run is a line in
// events.jsonl, from which a project's cost of the day is summed (Day).
//
// A box's figures are claims (SPEC, threat model): an agent that another
// agent created (record.Parent: through the API or MCP) runs code its
// creator chose, and prints whatever figures it likes. What it reports
// counts against its creator's tree only (the ancestors' TreeTotals, the
// project's ClaimedTotals) — never toward the project's cost of the day, so
// it can neither pause the user's agents through the daily budget (printing
// 999999) nor hide spending from it (printing 0). Its own per-run limits
// still pause it, and only the user answers that pause (package budget).
//
// The core counts a run where it records the run's end (Count, inside the
// transition's write) and then reports it (Event, and Day.Add for what
// counts toward the day).
package figures

import (
	"fmt"
	"sync"
	"time"

	"shepherd/backend/loganalysis"
	"shepherd/backend/store"
)

// EventName is the event of a counted run in events.jsonl.
const EventName = "run:figures"

// Of turns a run's result (Claude's result line, Codex's last turn) into
// run figures. Codex reports no duration and no cost: its duration is the
// run's, from the record.
func Of(r *store.Record, c *loganalysis.Claude, at time.Time) store.RunFigures {
	at = at.UTC()
	f := store.RunFigures{Runs: 1, Turns: c.NumTurns, DurationMs: c.DurationMs,
		InputTokens: c.InputTokens, CachedInputTokens: c.CachedTokens, OutputTokens: c.OutputTokens,
		ReasoningTokens: c.ReasoningTokens, At: &at}
	if r.Profile == store.ProfileClaudeJSON {
		cost := c.TotalCostUSD
		f.CostUSD = &cost
	}
	if f.DurationMs == 0 && r.StartedAt != nil && at.After(*r.StartedAt) {
		f.DurationMs = at.Sub(*r.StartedAt).Milliseconds()
	}
	// One run's result, whenever it is read again.
	f.Key = fmt.Sprintf("%s/%s/%d/%d/%.6f/%d/%d", c.SessionID, c.Subtype, c.NumTurns, c.DurationMs, c.TotalCostUSD, c.InputTokens, c.OutputTokens)
	if r.Profile == store.ProfileCodexJSON && r.StartedAt != nil {
		f.Key += "/" + r.StartedAt.UTC().Format(time.RFC3339Nano) // a resumed Codex run keeps its thread id
	}
	return f
}

// Count puts a run's figures on the record, unless they are the ones it
// already has (the same run read again). It reports whether it counted.
func Count(r *store.Record, c *loganalysis.Claude, at time.Time) (store.RunFigures, bool) {
	if c == nil {
		return store.RunFigures{}, false
	}
	f := Of(r, c, at)
	if r.LastResult != nil && r.LastResult.Key == f.Key {
		return f, false
	}
	r.LastResult = &f
	r.Totals = r.Totals.Add(f)
	return f, true
}

// Event is the events.jsonl line of a run of r counted with f.
func Event(r *store.Record, f store.RunFigures, at time.Time) store.Event {
	data := map[string]any{"turns": f.Turns, "durationMs": f.DurationMs, "inputTokens": f.InputTokens,
		"cachedInputTokens": f.CachedInputTokens, "outputTokens": f.OutputTokens}
	if f.CostUSD != nil {
		data["costUsd"] = *f.CostUSD
	}
	if r.Parent != "" {
		data["claimedBy"] = r.Parent // a claim of the creator's tree, not the project's cost
	}
	return store.Event{Time: at.UTC(), Event: EventName, AgentID: r.ID, Data: data}
}

// CountsToday reports whether a run of r counted with f adds to its
// project's cost of the day: a cost the user's own agent reported.
func CountsToday(r *store.Record, f store.RunFigures) bool {
	return f.CostUSD != nil && r.Parent == ""
}

// Day is a project's cost of the (local) day: what its user's own agents'
// runs reported today. Safe for concurrent use; its lock is a leaf.
type Day struct {
	mu   sync.Mutex
	day  string // the local day cost is of
	cost float64
}

func dayOf(t time.Time) string { return t.Local().Format("2006-01-02") }

// Add adds a run's cost at now.
func (d *Day) Add(now time.Time, usd float64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if day := dayOf(now); d.day != day {
		d.day, d.cost = day, 0
	}
	d.cost += usd
}

// Today is the cost of now's day (0 on a day nothing cost anything).
func (d *Day) Today(now time.Time) float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.day != dayOf(now) {
		return 0
	}
	return d.cost
}

// Load sums the costs of now's day from a project's events, read newest
// first by each (store.EachEvent: appends are in time order, so the read
// stops at the day's start).
func (d *Day) Load(now time.Time, each func(func(store.Event) bool) error) error {
	day := dayOf(now)
	y, m, dd := now.Local().Date()
	start := time.Date(y, m, dd, 0, 0, 0, 0, time.Local)
	sum := 0.0
	err := each(func(ev store.Event) bool {
		if ev.Time.Before(start) {
			return false // the day is read
		}
		if ev.Event != EventName || dayOf(ev.Time) != day {
			return true
		}
		if _, claim := ev.Data["claimedBy"]; claim {
			return true
		}
		if c, ok := ev.Data["costUsd"].(float64); ok {
			sum += c
		}
		return true
	})
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.day, d.cost = day, sum
	d.mu.Unlock()
	return nil
}

// Claims sums what each agent's descendants reported (TreeTotals), by the
// id of the ancestor: figures of agents another agent created, which count
// against their creator's tree only.
func Claims(recs []*store.Record) map[string]*store.RunFigures {
	byID := make(map[string]*store.Record, len(recs))
	for _, r := range recs {
		byID[r.ID] = r
	}
	out := map[string]*store.RunFigures{}
	for _, r := range recs {
		if r.Parent == "" || r.Totals == nil {
			continue
		}
		seen := map[string]bool{r.ID: true}
		for id := r.Parent; id != "" && !seen[id]; {
			seen[id] = true
			anc := byID[id]
			if anc == nil {
				break
			}
			out[id] = out[id].Add(*r.Totals)
			id = anc.Parent
		}
	}
	return out
}

// WithTreeTotals fills the TreeTotals of recs (one project's) from each
// other.
func WithTreeTotals(recs []*store.Record) {
	c := Claims(recs)
	for _, r := range recs {
		r.TreeTotals = c[r.ID]
	}
}

// Totals sums a project's records' figures: its user's own agents' in
// mine, the claims of agents created by agents in claimed.
func Totals(recs []*store.Record) (mine, claimed *store.RunFigures) {
	for _, r := range recs {
		if r.Totals == nil {
			continue
		}
		if r.Parent == "" {
			mine = mine.Add(*r.Totals)
		} else {
			claimed = claimed.Add(*r.Totals)
		}
	}
	return mine, claimed
}
