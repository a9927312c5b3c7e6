package supervisor

import (
	"context"
	"math"
	"strings"
	"testing"

	"shepherd/backend/lifecycle"
	"shepherd/internal/testutil"
)

// Two runs and a resume of the fake Claude add up exactly; the totals and
// the project's cost of the day survive an engine restart, and reading the
// last run's log again does not count it twice.
func TestRunFiguresAddUp(t *testing.T) {
	h := newClaudeHarness(t)
	h.claude("a", "success", "success")
	h.waitStatus("a", lifecycle.Completed)
	h.start("a")
	testutil.Eventually(t, "second run", func() bool {
		r := h.get("a")
		return r.Status == lifecycle.Completed && r.Totals != nil && r.Totals.Runs == 2
	})
	if _, err := h.e.ResumeAgent(context.Background(), h.project.ID, "a"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the resume", func() bool { r := h.get("a"); return r.Status == lifecycle.Completed && r.Totals.Runs == 3 })
	check := func(e *Engine, when string) {
		r, _ := e.GetAgent(h.project.ID, "a")
		tot, last := r.Totals, r.LastResult
		if tot.Runs != 3 || tot.Turns != 9 || tot.DurationMs != 3*1234 || tot.InputTokens != 3*120 ||
			tot.CachedInputTokens != 3*300 || tot.OutputTokens != 3*50 || tot.CostUSD == nil || math.Abs(*tot.CostUSD-3*0.0123) > 1e-9 {
			t.Fatalf("%s: totals %+v cost %v", when, tot, *tot.CostUSD)
		}
		if last == nil || last.Turns != 3 || *last.CostUSD != 0.0123 {
			t.Fatalf("%s: last result %+v", when, last)
		}
		v, _ := e.ProjectState(h.project.ID)
		if v.Totals == nil || v.Totals.Runs != 3 || math.Abs(v.CostToday-3*0.0123) > 1e-9 {
			t.Fatalf("%s: project totals %+v, today %v", when, v.Totals, v.CostToday)
		}
	}
	check(h.e, "after three runs")
	if n := strings.Count(h.events(), `"event":"run:figures"`); n != 3 {
		t.Fatalf("%d runs in events.jsonl", n)
	}
	h.e.Close()
	e2 := h.engine(func(c *Config) { c.Clock = h.clk })
	if _, err := e2.SelectProject(context.Background(), h.project.ID); err != nil {
		t.Fatal(err)
	}
	check(e2, "after a restart")
}
