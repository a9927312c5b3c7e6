package figures

import (
	"testing"
	"time"

	"shepherd/backend/loganalysis"
	"shepherd/backend/store"
)

// A run read again is not counted twice; another run adds up.
func TestCountOnce(t *testing.T) {
	r := &store.Record{ID: "a", Profile: store.ProfileClaudeJSON}
	c := &loganalysis.Claude{SessionID: "s", Subtype: "success", NumTurns: 3, DurationMs: 1000, TotalCostUSD: 0.5}
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	if _, ok := Count(r, c, at); !ok {
		t.Fatal("the first run was not counted")
	}
	if _, ok := Count(r, c, at.Add(time.Hour)); ok {
		t.Fatal("the same result counted twice")
	}
	c2 := *c
	c2.NumTurns = 4
	if _, ok := Count(r, &c2, at); !ok {
		t.Fatal("a second run was not counted")
	}
	if r.Totals.Runs != 2 || r.Totals.Turns != 7 || *r.Totals.CostUSD != 1.0 || r.LastResult.Turns != 4 {
		t.Fatalf("totals %+v last %+v", r.Totals, r.LastResult)
	}
	if _, ok := Count(r, nil, at); ok {
		t.Fatal("no result counted")
	}
}

// What agents created by agents report counts against their ancestors'
// trees and not toward the day; the user's own agents' costs do.
func TestClaimsAndDay(t *testing.T) {
	one := 1.0
	recs := []*store.Record{
		{ID: "root"},
		{ID: "kid", Parent: "root", Totals: &store.RunFigures{Runs: 1, CostUSD: &one}},
		{ID: "grandkid", Parent: "kid", Totals: &store.RunFigures{Runs: 2, CostUSD: &one}},
		{ID: "loop", Parent: "loop", Totals: &store.RunFigures{Runs: 1}},
	}
	WithTreeTotals(recs)
	if recs[0].TreeTotals == nil || recs[0].TreeTotals.Runs != 3 || recs[1].TreeTotals.Runs != 2 || recs[2].TreeTotals != nil {
		t.Fatalf("tree totals %+v %+v %+v", recs[0].TreeTotals, recs[1].TreeTotals, recs[2].TreeTotals)
	}
	mine, claimed := Totals(recs)
	if mine != nil || claimed.Runs != 4 {
		t.Fatalf("totals %+v, claimed %+v", mine, claimed)
	}
	now := time.Now()
	var d Day
	events := []store.Event{ // newest first
		{Time: now, Event: EventName, Data: map[string]any{"costUsd": 0.25}},
		{Time: now, Event: EventName, Data: map[string]any{"costUsd": 100.0, "claimedBy": "root"}},
		{Time: now, Event: "transition"},
		{Time: now.Add(-48 * time.Hour), Event: EventName, Data: map[string]any{"costUsd": 7.0}},
	}
	err := d.Load(now, func(f func(store.Event) bool) error {
		for _, ev := range events {
			if !f(ev) {
				break
			}
		}
		return nil
	})
	if err != nil || d.Today(now) != 0.25 {
		t.Fatalf("today %v (%v), want 0.25", d.Today(now), err)
	}
	d.Add(now, 0.5)
	if d.Today(now) != 0.75 || d.Today(now.Add(48*time.Hour)) != 0 {
		t.Fatalf("today %v, in two days %v", d.Today(now), d.Today(now.Add(48*time.Hour)))
	}
	d.Add(now.Add(48*time.Hour), 2)
	if d.Today(now.Add(48*time.Hour)) != 2 {
		t.Fatalf("a new day starts at 0: %v", d.Today(now.Add(48*time.Hour)))
	}
}
