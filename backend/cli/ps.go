package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"shepherd/backend/api"
	"shepherd/backend/money"
	"shepherd/backend/store"
)

// The dashboard: every agent of the loaded projects with its CPU and
// memory (live on a terminal: live.go), or one agent.

func (e *env) psCmd() *cobra.Command {
	c := &cobra.Command{
		Use: "ps [P A] [--once] [--wide]",
		Short: "the dashboard: every agent of every loaded project with its CPU and memory, live " +
			"(q quits; --json or --once: one sample; --wide: every column, log paths too), or one agent",
		Args:              positional(0, 2),
		ValidArgsFunction: e.completes(projectArg, agentArg),
	}
	once := c.Flags().Bool("once", false, "print one sample and quit (as when the output is not a terminal)")
	c.Flags().BoolVar(&e.wide, "wide", false, "every column, whole (the log paths too), however wide the terminal")
	c.RunE = func(_ *cobra.Command, pos []string) error {
		if len(pos) == 0 && !*once && !e.json && isTerminal(e.terminal()) {
			return e.livePs()
		}
		return cmdPs(e, pos)
	}
	return c
}

func cmdPs(e *env, pos []string) error {
	switch len(pos) {
	case 1:
		return usagef("ps: give both P and A, or neither")
	case 2:
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		out, human, err := fetch(e, api.GetProcess, api.AgentIn{Project: id, Agent: pos[1]})
		if !human {
			return err
		}
		return e.printRecord(out.Body)
	}
	out, human, err := fetch(e, api.ListProcesses, api.StatsIn{Stats: true})
	if !human {
		return err
	}
	return e.psTable(out.Body)
}

// psColumns are the dashboard's columns; drop orders the least useful
// first. The log path is for --wide (and `get`): it is as wide as a
// terminal by itself.
var psColumns = []column{
	{head: "PROJECT", drop: 7, min: 8},
	{head: "ID"},
	{head: "STATUS", min: 12},
	{head: "ACTIVITY", drop: 6, min: 10},
	{head: "CPU"},
	{head: "MEM", drop: 8},
	{head: "PID", drop: 2},
	{head: "EXIT", drop: 3},
	{head: "REASON", drop: 5, min: 10},
	{head: "STARTED", drop: 4},
	{head: "LOG", drop: 1, keepEnd: true},
}

// psTable prints the dashboard's table, in the terminal's width.
func (e *env) psTable(recs []*store.Record) error {
	if len(recs) == 0 {
		fmt.Fprintln(e.stdout, "No agents in the loaded projects.")
		return nil
	}
	names := e.projectNames()
	cols := psColumns
	if !e.wide {
		cols = cols[:len(cols)-1] // no LOG
	}
	now := time.Now()
	rows := make([][]string, 0, len(recs))
	for _, r := range recs {
		row := []string{names.of(r.ProjectID), r.ID, statusText(r), dash(activityText(r.Activity, now)), cpuText(r.Stats),
			memText(r.Stats), pidText(r.PID), exitText(r.ExitCode, r.Signal), dash(string(r.ExitReason)), e.startedText(r.StartedAt, now)}
		if e.wide {
			row = append(row, r.LogPath)
		}
		rows = append(rows, row)
	}
	return fitTable(e.stdout, cols, rows, e.width(), e.wide)
}

// costText is a cost in dollars ("-" when the CLI reports none).
func costText(f *store.RunFigures) string {
	if f == nil || f.CostUSD == nil {
		return "-"
	}
	return money.Format(*f.CostUSD)
}

// countText is a count of tokens: 950, 12.3k, 1.2M.
func countText(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
	}
}

func cpuText(s *store.Stats) string {
	if s == nil || s.CPUPercent == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", *s.CPUPercent)
}

func memText(s *store.Stats) string {
	if s == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f MiB", float64(s.RSSBytes)/(1<<20))
}
