package supervisor

import (
	"fmt"
	"time"

	"shepherd/backend/loganalysis"
	"shepherd/backend/store"
)

// What a run cost (SPEC "Figures from the log"): the latest run's turns,
// duration, tokens and cost are kept on the record (lastResult) and summed
// per agent (totals) across runs and resumes, and per project; each run is
// counted once, when its end is recorded, from the result line the engine
// read while it ran (or, for a run that ended while the engine was away,
// from the log's tail). Every counted run is a line in events.jsonl, from
// which a project's cost of the day is summed.
//
// A box's figures are claims (SPEC, threat model): an agent that another
// agent created (record.Parent: through the API or MCP) runs code its
// creator chose, and prints whatever figures it likes. What it reports
// counts against its creator's tree only (the ancestors' TreeTotals, the
// project's ClaimedTotals) — never toward the project's cost of the day, so
// it can neither pause the user's agents through the daily budget (printing
// 999999) nor hide spending from it (printing 0) . Its own per-run limits
// still pause it, and only the user answers that pause (budget.go).

// figuresOf turns a run's result (Claude's result line, Codex's last turn)
// into run figures. Codex reports no duration and no cost: its duration is
// the run's, from the record.
func figuresOf(r *store.Record, c *loganalysis.Claude, at time.Time) store.RunFigures {
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

// countRun puts a run's figures on the record, unless they are the ones it
// already has (the same run read again). It reports whether it counted.
func countRun(r *store.Record, c *loganalysis.Claude, at time.Time) (store.RunFigures, bool) {
	if c == nil {
		return store.RunFigures{}, false
	}
	f := figuresOf(r, c, at)
	if r.LastResult != nil && r.LastResult.Key == f.Key {
		return f, false
	}
	r.LastResult = &f
	r.Totals = r.Totals.Add(f)
	return f, true
}

// runCounted records a counted run in events.jsonl and in its project's
// cost of the day. a.mu is held.
func (e *Engine) runCounted(a *agent, f store.RunFigures) {
	data := map[string]any{"turns": f.Turns, "durationMs": f.DurationMs, "inputTokens": f.InputTokens,
		"cachedInputTokens": f.CachedInputTokens, "outputTokens": f.OutputTokens}
	if f.CostUSD != nil {
		data["costUsd"] = *f.CostUSD
	}
	if a.rec.Parent != "" {
		data["claimedBy"] = a.rec.Parent // a claim of the creator's tree, not the project's cost
	}
	e.appendEvent(a.rec.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "run:figures", AgentID: a.rec.ID, Data: data})
	if f.CostUSD != nil && a.rec.Parent == "" {
		a.p.addCost(e.clock.Now(), *f.CostUSD)
		p := a.p
		e.goTask(func() { e.checkDaily(p, false) }) // it takes other agents' locks
	}
}

// addCost adds a run's cost to the project's cost of the (local) day.
func (p *project) addCost(now time.Time, usd float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	day := now.Local().Format("2006-01-02")
	if p.costDay != day {
		p.costDay, p.costToday = day, 0
	}
	p.costToday += usd
}

// loadCostToday sums the costs of today's runs of the user's own agents
// from events.jsonl, read back across its rotated files to the day's start.
func (e *Engine) loadCostToday(p *project) {
	now := e.clock.Now()
	day := now.Local().Format("2006-01-02")
	y, m, d := now.Local().Date()
	dayStart := time.Date(y, m, d, 0, 0, 0, 0, time.Local)
	sum := 0.0
	err := e.st.EachEvent(p.info.ID, false, func(ev store.Event) bool {
		if ev.Time.Before(dayStart) {
			return false // appends are in time order: the day is read
		}
		if ev.Event != "run:figures" || ev.Time.Local().Format("2006-01-02") != day {
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
		return
	}
	p.mu.Lock()
	p.costDay, p.costToday = day, sum
	p.mu.Unlock()
}

// claims sums what each agent's descendants reported (TreeTotals), by the
// id of the ancestor: figures of agents another agent created, which count
// against their creator's tree only.
func claims(recs []*store.Record) map[string]*store.RunFigures {
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

// withTreeTotals fills the TreeTotals of recs (one project's) from each
// other.
func withTreeTotals(recs []*store.Record) {
	c := claims(recs)
	for _, r := range recs {
		r.TreeTotals = c[r.ID]
	}
}

// treeTotalsOf is what the descendants of agentID in p reported.
func (e *Engine) treeTotalsOf(p *project, agentID string) *store.RunFigures {
	as := p.list()
	recs := make([]*store.Record, 0, len(as))
	for _, a := range as {
		a.mu.Lock()
		r := &store.Record{ID: a.rec.ID, Parent: a.rec.Parent}
		if a.rec.Totals != nil {
			t := *a.rec.Totals
			r.Totals = &t
		}
		a.mu.Unlock()
		recs = append(recs, r)
	}
	return claims(recs)[agentID]
}
