package supervisor

import (
	"shepherd/backend/store"
	"shepherd/backend/supervisor/figures"
)

// What runs cost is package figures'; the core counts a run where it
// records its end (figures.Count inside the transition's write) and then
// reports it here.

// runCounted records a counted run in events.jsonl and, for what counts
// toward it, in its project's cost of the day — which the daily budget
// then judges. a.mu is held.
func (e *Engine) runCounted(a *agent, f store.RunFigures) {
	now := e.clock.Now()
	e.appendEvent(a.rec.ProjectID, figures.Event(a.rec, f, now))
	if figures.CountsToday(a.rec, f) {
		a.p.cost.Add(now, *f.CostUSD)
		p := a.p
		e.goTask(func() { e.checkDaily(p, false) }) // it takes other agents' locks
	}
}

// loadCostToday sums the costs of today's runs of the user's own agents
// from events.jsonl, read back across its rotated files to the day's start.
func (e *Engine) loadCostToday(p *project) {
	err := p.cost.Load(e.clock.Now(), func(f func(store.Event) bool) error { return e.st.EachEvent(p.info.ID, false, f) })
	if err != nil {
		e.log.Warn().Err(err).Str("project", p.info.ID).Msg("cannot read today's costs from the events; the day's cost starts at 0")
	}
}

// treeTotalsOf is what the descendants of agentID in p reported.
func (e *Engine) treeTotalsOf(p *project, agentID string) *store.RunFigures {
	return figures.Claims(e.figureRecords(p))[agentID]
}

// figureRecords are the ids, parents and totals of p's agents: what the
// sums of figures need of them.
func (e *Engine) figureRecords(p *project) []*store.Record {
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
	return recs
}
