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
	e.appendEvent(a.rec.ProjectID, store.Event{Time: e.clock.Now().UTC(), Event: "run:figures", AgentID: a.rec.ID, Data: data})
	if f.CostUSD != nil {
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

// loadCostToday sums the costs of today's runs from events.jsonl.
func (e *Engine) loadCostToday(p *project) {
	evs, err := e.st.ReadEvents(p.info.ID, "", 0)
	if err != nil {
		return
	}
	now := e.clock.Now()
	day := now.Local().Format("2006-01-02")
	sum := 0.0
	for _, ev := range evs {
		if ev.Event != "run:figures" || ev.Time.Local().Format("2006-01-02") != day {
			continue
		}
		if c, ok := ev.Data["costUsd"].(float64); ok {
			sum += c
		}
	}
	p.mu.Lock()
	p.costDay, p.costToday = day, sum
	p.mu.Unlock()
}
