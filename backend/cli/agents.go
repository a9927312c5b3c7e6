package cli

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"shepherd/backend/api"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// The agents: list, show, start, resume, acknowledge, stop, remove (create
// is in create.go, pause in pause.go, the worktree verbs in worktree.go).

func (e *env) lsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:               "ls P [--wide]",
		Short:             "list a project's agents, in the terminal's width (--wide: every column, whole)",
		Args:              positional(1, 1),
		ValidArgsFunction: e.completes(projectArg),
		RunE:              e.runs(cmdList),
	}
	c.Flags().BoolVar(&e.wide, "wide", false, "every column, whole, however wide the terminal")
	return c
}

// lsColumns are `ls`'s columns; drop orders the least useful first.
var lsColumns = []column{
	{head: "ID"},
	{head: "STATUS", min: 12},
	{head: "ACTIVITY", drop: 7, min: 10},
	{head: "PID", drop: 2},
	{head: "EXIT", drop: 3},
	{head: "REASON", drop: 6, min: 10},
	{head: "STARTED", drop: 4},
	{head: "COST", drop: 5},
	{head: "COMMAND", drop: 1, min: 16},
}

func cmdList(e *env, pos []string) error {
	id, err := e.resolveProject(pos[0])
	if err != nil {
		return err
	}
	out, human, err := fetch(e, api.ListAgents, api.ListAgentsIn{Project: id})
	if !human {
		return err
	}
	recs := out.Body
	if len(recs) == 0 {
		fmt.Fprintf(e.stdout, "No agents in project %s.\n", e.projectText(id))
		return nil
	}
	// The cost column only when some agent reports a cost.
	withCost := false
	for _, r := range recs {
		withCost = withCost || r.Totals != nil && r.Totals.CostUSD != nil
	}
	cols := lsColumns
	if !withCost {
		cols = slices.DeleteFunc(slices.Clone(cols), func(c column) bool { return c.head == "COST" })
	}
	now := time.Now()
	rows := make([][]string, 0, len(recs))
	for _, r := range recs {
		row := []string{r.ID, statusText(r), dash(activityText(r.Activity, now)), pidText(r.PID),
			exitText(r.ExitCode, r.Signal), dash(string(r.ExitReason)), e.startedText(r.StartedAt, now)}
		if withCost {
			row = append(row, costText(r.Totals))
		}
		rows = append(rows, append(row, commandText(r.Command, r.Args)))
	}
	return fitTable(e.stdout, cols, rows, e.width(), e.wide)
}

// width is what tables fit: the terminal's (80 when not a terminal). The
// terminal is stdout itself (e.term): what escapes agent text on it is not.
func (e *env) width() int {
	if e.cols > 0 {
		return e.cols
	}
	return termWidth(e.terminal())
}

// startedText is when a run started: "15:04:05" today, "Jan 2 15:04"
// before, the whole date and time with --wide.
func (e *env) startedText(t *time.Time, now time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	if e.wide {
		return timeText(t)
	}
	l, n := t.Local(), now.Local()
	if y, m, d := l.Date(); y == n.Year() && m == n.Month() && d == n.Day() {
		return l.Format("15:04:05")
	}
	if l.Year() == n.Year() {
		return l.Format("Jan 2 15:04")
	}
	return l.Format("2006-01-02")
}

func (e *env) getCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "get P A",
		Short:             "show one agent's record",
		Args:              positional(2, 2),
		ValidArgsFunction: e.completes(projectArg, agentArg),
		RunE:              e.runs(cmdGet),
	}
}

func cmdGet(e *env, pos []string) error {
	id, err := e.resolveProject(pos[0])
	if err != nil {
		return err
	}
	out, human, err := fetch(e, api.GetAgent, api.AgentIn{Project: id, Agent: pos[1]})
	if !human {
		return err
	}
	return e.printRecord(out.Body)
}

func (e *env) printRecord(r *store.Record) error {
	tw := e.table()
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", k, v)
		}
	}
	row("ID", r.ID)
	row("Project", e.projectNames().of(r.ProjectID)+" ("+r.ProjectID+")")
	row("Name", r.Name)
	row("Status", statusText(r))
	if r.Status == "paused" && r.PausedAt != nil {
		row("Paused", r.PausedAt.Local().Format("2006-01-02 15:04:05")+" "+r.PauseNote)
	}
	if r.MaxBudgetUsd > 0 || r.MaxTurns > 0 {
		row("Budget", budgetText(r))
	}
	row("Desired", string(r.Desired))
	row("Exit reason", string(r.ExitReason))
	if r.ExitCode != nil || r.Signal != "" {
		row("Exit", exitText(r.ExitCode, r.Signal))
	}
	row("Activity", activityText(r.Activity, time.Now()))
	if t := r.Totals; t != nil {
		claim := ""
		if r.Parent != "" {
			claim = " (as it reports it: counted against " + r.Parent + "'s tree, not the project's budget)"
		}
		row("Cost", fmt.Sprintf("%s over %d run(s): %d turns, %s tokens in, %s cached, %s out%s", costText(t), t.Runs, t.Turns,
			countText(t.InputTokens), countText(t.CachedInputTokens), countText(t.OutputTokens), claim))
	}
	if t := r.TreeTotals; t != nil {
		row("Its agents' cost", fmt.Sprintf("%s over %d run(s), as the agents it created report it (not counted in the project's budget)", costText(t), t.Runs))
	}
	if l := r.LastResult; l != nil {
		row("Last run", fmt.Sprintf("%s: %d turns in %s", costText(l), l.Turns, durationText(time.Duration(l.DurationMs)*time.Millisecond)))
	}
	row("Error", r.Error)
	row("PID", pidText(r.PID))
	if r.PID != 0 && !r.Attached {
		row("Attached", "no (re-attached: not a child of this engine)")
	}
	row("Command", commandText(r.Command, supervisor.BudgetArgs(r, r.Args))) // as a run gets them
	row("Cwd", r.Cwd)
	worktreeRows(row, r)
	if len(r.Env) > 0 {
		keys := make([]string, 0, len(r.Env))
		for k := range r.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			row("Env", k+"="+r.Env[k])
		}
	}
	row("Profile", r.Profile)
	if len(r.ResumeArgs) > 0 {
		row("Resume args", strings.Join(quoteAll(supervisor.BudgetArgs(r, r.ResumeArgs)), " "))
	}
	row("Session", r.SessionID)
	row("Keep alive", yesNo(r.KeepAlive))
	row("Auto start", yesNo(r.AutoStartOnRestore))
	if r.TimeoutSec > 0 {
		row("Timeout", fmt.Sprintf("%ds", r.TimeoutSec))
	}
	row("Grace", fmt.Sprintf("%ds", r.GraceSec))
	row("Created", timeText(&r.CreatedAt))
	row("Started", optTime(r.StartedAt))
	row("Stopped", optTime(r.StoppedAt))
	row("Last activity", optTime(r.LastActivityAt))
	if r.RestartCount > 0 || r.RestartFailureCount > 0 {
		row("Restarts", fmt.Sprintf("%d (failures in a row: %d)", r.RestartCount, r.RestartFailureCount))
	}
	row("Next restart", optTime(r.NextRestartAt))
	if r.ResumeCount > 0 || r.AutoResumeCount > 0 {
		row("Resumes", fmt.Sprintf("%d (automatic: %d)", r.ResumeCount, r.AutoResumeCount))
	}
	row("Paused", optTime(r.PausedAt))
	row("Sandbox", sandboxText(r.Sandbox))
	row("Log", r.LogPath)
	return tw.Flush()
}

func (e *env) startCmd() *cobra.Command {
	return e.agentAction("start P A", "start an agent", api.StartAgent, func(r store.Record) string {
		return "Started " + r.ID + ": " + runText(&r) + "."
	})
}

func (e *env) resumeCmd() *cobra.Command {
	return e.agentAction("resume P A", "resume an agent's session (its resume args, {sessionId} filled in)", api.ResumeAgent,
		func(r store.Record) string {
			return fmt.Sprintf("Resumed %s, session %s: %s.", r.ID, dash(r.SessionID), runText(&r))
		})
}

func (e *env) ackCmd() *cobra.Command {
	return e.agentAction("ack P A", "acknowledge what an agent needed (a failure, silence): it leaves Needs you until it needs you again",
		api.AckAgent, func(r store.Record) string {
			return fmt.Sprintf("Acknowledged %s: it is %s and no longer needs you, until it fails again.", r.ID, r.Status)
		})
}

// agentAction is a verb that calls an agent's action and prints
// say(record), or the raw answer with --json.
func (e *env) agentAction(use, short string, op *api.Op[api.AgentIn, api.Reply[*store.Record]], say func(r store.Record) string) *cobra.Command {
	return &cobra.Command{
		Use:               use,
		Short:             short,
		Args:              positional(2, 2),
		ValidArgsFunction: e.completes(projectArg, agentArg),
		RunE: func(_ *cobra.Command, pos []string) error {
			id, err := e.resolveProject(pos[0])
			if err != nil {
				return err
			}
			out, human, err := fetch(e, op, api.AgentIn{Project: id, Agent: pos[1]})
			if !human {
				return err
			}
			fmt.Fprintln(e.stdout, say(*out.Body))
			return nil
		},
	}
}

func (e *env) stopCmd() *cobra.Command {
	c := &cobra.Command{
		Use:               "stop P A [--grace SEC]",
		Short:             "stop an agent: SIGTERM to its process group, SIGKILL after the grace",
		Args:              positional(2, 2),
		ValidArgsFunction: e.completes(projectArg, agentArg),
	}
	var grace optInt
	c.Flags().Var(&grace, "grace", "seconds between SIGTERM and SIGKILL (default: the agent's own)")
	c.RunE = func(_ *cobra.Command, pos []string) error {
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		in := api.StopAgentIn{Project: id, Agent: pos[1]}
		if grace.v != nil {
			in.Body = &api.StopInput{GraceSec: grace.v}
		}
		out, human, err := fetch(e, api.StopAgent, in)
		if !human {
			return err
		}
		fmt.Fprintf(e.stdout, "Stopped %s: %s.\n", out.Body.ID, endText(out.Body))
		return nil
	}
	return c
}

func (e *env) rmCmd() *cobra.Command {
	c := &cobra.Command{
		Use:               "rm P A [--force] [--delete-log] [--keep|--merge [-m MSG]|--discard]",
		Short:             "remove an agent (--force: stop it first; a worktree: keep, merge or discard)",
		Args:              positional(2, 2),
		ValidArgsFunction: e.completes(projectArg, agentArg),
	}
	force := c.Flags().Bool("force", false, "stop the agent first if it is running")
	deleteLog := c.Flags().Bool("delete-log", false, "delete its log too")
	wt := addRemoveFlags(c)
	c.RunE = func(_ *cobra.Command, pos []string) error {
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		in := api.RemoveAgentIn{Project: id, Agent: pos[1], Force: *force, DeleteLog: *deleteLog}
		if err := wt.apply(&in); err != nil {
			return err
		}
		_, human, err := fetch(e, api.RemoveAgent, in)
		if !human && askDiscard(e, err) {
			in.DiscardChanges = true
			_, human, err = fetch(e, api.RemoveAgent, in)
		}
		if !human {
			return err
		}
		if *deleteLog {
			fmt.Fprintf(e.stdout, "Removed %s and its log.\n", pos[1])
		} else {
			fmt.Fprintf(e.stdout, "Removed %s; its log was kept.\n", pos[1])
		}
		return nil
	}
	return c
}

func (e *env) stopAllCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "stop-all P",
		Short:             "stop every running agent of a project",
		Args:              positional(1, 1),
		ValidArgsFunction: e.completes(projectArg),
		RunE:              e.runs(cmdStopAll),
	}
}

func cmdStopAll(e *env, pos []string) error {
	id, err := e.resolveProject(pos[0])
	if err != nil {
		return err
	}
	out, raw, err := call(e, api.StopAll, api.ProjectIn{Project: id})
	if err != nil {
		return err
	}
	res := out.Body
	failed := 0
	for _, r := range res {
		if r.Error != "" {
			failed++
		}
	}
	if e.json {
		e.printRaw(raw)
	} else if len(res) == 0 {
		fmt.Fprintln(e.stdout, "No running agents.")
	} else {
		tw := e.table()
		fmt.Fprintln(tw, "AGENT\tSTATUS\tREASON\tERROR")
		for _, r := range res {
			status, reason := "-", "-"
			if r.Record != nil {
				status, reason = string(r.Record.Status), dash(string(r.Record.ExitReason))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.AgentID, status, reason, dash(r.Error))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d agent(s) could not be stopped", failed, len(res))
	}
	return nil
}
