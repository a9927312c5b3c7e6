package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"shepherd/backend/api"
	"shepherd/backend/money"
	"shepherd/backend/presets"
	"shepherd/backend/sandbox"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

type runFunc = func(e *env, pos, tail []string) error

func init() {
	commands = []*command{
		{name: "projects", summary: "list the known projects", maxPos: 0, run: cmdProjects},
		{name: "add-project", args: "PATH [--name N]", summary: "add a project folder (the same path again gives the same project)",
			minPos: 1, maxPos: 1, setup: setupAddProject},
		{name: "select", args: "P", summary: "load a project: check every agent against reality and print what was found",
			minPos: 1, maxPos: 1, run: cmdSelect},
		{name: "ls", args: "P [--wide]", summary: "list a project's agents, in the terminal's width (--wide: every column, whole)", minPos: 1, maxPos: 1, setup: setupList},
		{name: "get", args: "P A", summary: "show one agent's record", minPos: 2, maxPos: 2, run: cmdGet},
		{name: "create", args: "P A [flags] -- CMD [ARGS…]  |  P A --preset claude|codex [--prompt TEXT] [--model M] [-- OPTIONS…]", summary: "create an agent (not started)",
			minPos: 2, maxPos: 2, rest: true, restOptional: true, setup: setupCreate},
		{name: "sandbox", args: "P A (--permissions TAGS | --off)", summary: "sandbox an agent that is not running (no network, no writes but its log, plus what TAGS grant: @network,@write:/abs/folder), or --off to run it unsandboxed again",
			minPos: 2, maxPos: 2, setup: setupSandbox},
		{name: "start", args: "P A", summary: "start an agent", minPos: 2, maxPos: 2, run: cmdStart},
		{name: "resume", args: "P A", summary: "resume an agent's session (its resume args, {sessionId} filled in)", minPos: 2, maxPos: 2, run: cmdResume},
		{name: "ack", args: "P A", summary: "acknowledge what an agent needed (a failure, silence): it leaves Needs you until it needs you again",
			minPos: 2, maxPos: 2, run: cmdAck},
		{name: "settings", args: "P [--key value]…", summary: "show or change a project's monitoring settings (keys as in the API: --staleThresholdSec 600 …)",
			minPos: 1, maxPos: 1, setup: setupSettings},
		{name: "stop", args: "P A [--grace SEC]", summary: "stop an agent: SIGTERM to its process group, SIGKILL after the grace",
			minPos: 2, maxPos: 2, setup: setupStop},
		{name: "rm", args: "P A [--force] [--delete-log] [--keep|--merge [-m MSG]|--discard]", summary: "remove an agent (--force: stop it first; a worktree: keep, merge or discard)",
			minPos: 2, maxPos: 2, setup: setupRemove},
		{name: "merge", args: "P A [-m MSG] [--plan]", summary: "merge a worktree agent's work into its base: what is not committed is committed first (-m: its message), then its branch merged; the agent stays",
			minPos: 2, maxPos: 2, setup: setupMerge},
		{name: "resolve", args: "P A [-m MSG]", summary: "after a merge conflict: ask a worktree agent to merge its base and resolve the conflicts (it resumes with that instruction)",
			minPos: 2, maxPos: 2, setup: setupResolve},
		{name: "diff", args: "P A [--patch]", summary: "a worktree agent's changes against its base",
			minPos: 2, maxPos: 2, setup: setupDiff},
		{name: "stop-all", args: "P", summary: "stop every running agent of a project", minPos: 1, maxPos: 1, run: cmdStopAll},
		{name: "logs", args: "P A [-n N] [-f]", summary: "print an agent's log (-f: keep printing what it writes, until Ctrl-C)",
			minPos: 2, maxPos: 2, setup: setupLogs},
		{name: "events", args: "[P] [-f]", summary: "print a project's event history (-f: the live events of the engine, or of P, until Ctrl-C)",
			maxPos: 1, setup: setupEvents},
		{name: "pause", args: "P [A] [--now] [--note TEXT]", summary: "pause a project (nothing of it starts; its agents are paused) or one agent, letting a tool call in flight finish unless --now",
			minPos: 1, maxPos: 2, setup: setupPause},
		{name: "unpause", args: "P [A]", summary: "resume a paused project (its paused agents go through the queue) or one paused agent",
			minPos: 1, maxPos: 2, run: cmdUnpause},
		{name: "budget", args: "P A [raise N|remove|once|stop] [--usd N] [--turns N]", summary: "show or set an agent's budget, or answer a budget pause: raise the limit reached above what was reached, remove it, resume once past it, or stop",
			minPos: 2, maxPos: 4, setup: setupBudget},
		{name: "mcp", args: "[install [--print]]", summary: "the MCP server on stdio, for coding agents to run and watch their processes through Shepherd; install adds it to Claude Code's .mcp.json here",
			maxPos: 1, setup: setupMCP},
		{name: "quit", summary: "ask the running engine (window or serve) to quit; agents keep running unless the stop-on-quit preference is on",
			maxPos: 0, run: cmdQuit},
		{name: "ps", args: "[P A] [--once] [--wide]", summary: "the dashboard: every agent of every loaded project with its CPU and memory, live (q quits; --json or --once: one sample; --wide: every column, log paths too), or one agent",
			maxPos: 2, setup: setupPs},
		{name: "status", summary: "check that the engine answers", maxPos: 0, run: cmdStatus},
		{name: "serve", args: "[--listen ADDR | --socket]", summary: "run the engine without a window, until Ctrl-C", maxPos: 0, setup: setupServe},
		{name: "help", args: "[COMMAND]", summary: "show help", maxPos: 1, run: cmdHelp},
	}
}

func cmdHelp(e *env, pos, _ []string) error {
	if len(pos) == 0 {
		printUsage(e.stdout)
		return nil
	}
	c := lookup(pos[0])
	if c == nil {
		return usagef("unknown command %q", pos[0])
	}
	fs, _ := flagsFor(c, &env{})
	printCommandUsage(e.stdout, c, fs)
	return nil
}

// resolveProject turns a project argument (id, name or path) into its id. An
// argument that matches nothing is passed on as is, so that the engine
// answers ProjectNotFound in its own words.
func (e *env) resolveProject(arg string) (string, error) {
	out, _, err := call(e, api.ListProjects, api.NoInput{})
	if err != nil {
		return "", err
	}
	ps := out.Body
	for _, p := range ps {
		if p.ID == arg {
			return p.ID, nil
		}
	}
	var byName []supervisor.ProjectView
	for _, p := range ps {
		if p.Name == arg {
			byName = append(byName, p)
		}
	}
	if len(byName) == 1 {
		return byName[0].ID, nil
	}
	if len(byName) > 1 {
		ids := make([]string, len(byName))
		for i, p := range byName {
			ids[i] = p.ID
		}
		return "", fmt.Errorf("project name '%s' is ambiguous (ids %s): use the id or the path", arg, strings.Join(ids, ", "))
	}
	if abs, err := filepath.Abs(arg); err == nil {
		want := canonical(abs)
		for _, p := range ps {
			if canonical(p.Path) == want {
				return p.ID, nil
			}
		}
	}
	return arg, nil
}

func canonical(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// --- projects

func cmdProjects(e *env, _, _ []string) error {
	out, human, err := fetch(e, api.ListProjects, api.NoInput{})
	if !human {
		return err
	}
	ps := out.Body
	if len(ps) == 0 {
		fmt.Fprintln(e.stdout, "No projects yet. Add one with: shepherd add-project PATH")
		return nil
	}
	tw := e.table()
	fmt.Fprintln(tw, "NAME\tRUNNING\tQUEUED\tSTATE\tPATH\tID")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", p.Name, liveText(p), p.Queued, pauseText(p), p.Path, p.ID)
	}
	return tw.Flush()
}

func setupAddProject(fs *flag.FlagSet) runFunc {
	name := fs.String("name", "", "the project's display name (default: the folder's name)")
	return func(e *env, pos, _ []string) error {
		// The engine runs with another working folder: send an absolute path.
		path, err := filepath.Abs(pos[0])
		if err != nil {
			return err
		}
		out, human, err := fetch(e, api.AddProject, api.AddProjectIn{Body: api.ProjectInput{Path: path, Name: *name}})
		if !human {
			return err
		}
		p := out.Body
		if out.Status == http.StatusCreated {
			fmt.Fprintf(e.stdout, "Added project %s (%s) at %s\n", p.Name, p.ID, p.Path)
		} else {
			fmt.Fprintf(e.stdout, "Project %s (%s) at %s is already known\n", p.Name, p.ID, p.Path)
		}
		return nil
	}
}

func cmdSelect(e *env, pos, _ []string) error {
	id, err := e.resolveProject(pos[0])
	if err != nil {
		return err
	}
	out, human, err := fetch(e, api.SelectProject, api.ProjectIn{Project: id})
	if !human {
		return err
	}
	sum := out.Body
	fmt.Fprintf(e.stdout, "Project %s selected: %d agent(s)", e.projectNames().of(sum.ProjectID), sum.Total)
	keys := make([]string, 0, len(sum.Counts))
	for k := range sum.Counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		if sum.Counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, sum.Counts[k]))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(e.stdout, " — %s", strings.Join(parts, ", "))
	}
	fmt.Fprintln(e.stdout)
	if len(sum.Agents) > 0 {
		tw := e.table()
		fmt.Fprintln(tw, "AGENT\tOUTCOME\tSTATUS\tEXIT\tDETAIL")
		for _, a := range sum.Agents {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.AgentID, a.Outcome, dash(a.Status), exitText(a.ExitCode, ""), dash(a.Detail))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, c := range sum.Corrupt {
		fmt.Fprintf(e.stdout, "Corrupt record of %s moved to %s: %s\n", c.AgentID, c.MovedTo, c.Problem)
	}
	return nil
}

// --- agents

func setupList(fs *flag.FlagSet) runFunc {
	wide := fs.Bool("wide", false, "every column, whole, however wide the terminal")
	return func(e *env, pos, _ []string) error {
		e.wide = *wide
		return cmdList(e, pos)
	}
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

// width is what tables fit: the terminal's (80 when not a terminal).
func (e *env) width() int {
	if e.cols > 0 {
		return e.cols
	}
	return termWidth(e.stdout)
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

func cmdGet(e *env, pos, _ []string) error {
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

func setupCreate(fs *flag.FlagSet) runFunc {
	var (
		envs       listFlag
		resumeArg  listFlag
		resumeArgs string
		timeout    nonNegInt
		grace      nonNegInt
		staleCheck optBool
	)
	cwd := fs.String("cwd", "", "working folder (default: the project folder)")
	name := fs.String("name", "", "display name")
	profile := fs.String("profile", "", "how to read the agent's log: generic, claude-stream-json or codex-json")
	preset := fs.String("preset", "", "an agent CLI Shepherd knows ("+strings.Join(presets.Names(), ", ")+"): its command, profile and resume arguments")
	prompt := fs.String("prompt", "", "with --preset: what to ask the agent")
	model := fs.String("model", "", "with --preset: the model to use")
	keepAlive := fs.Bool("keep-alive", false, "restart it with backoff when it dies")
	autoStart := fs.Bool("auto-start", false, "start it when its project is loaded")
	fs.Var(&envs, "env", "environment variable K=V (repeatable)")
	fs.Var(&timeout, "timeout", "stop it after SEC seconds (0: never)")
	fs.Var(&grace, "grace", "seconds between SIGTERM and SIGKILL when stopping (default 10)")
	fs.Var(&resumeArg, "resume-arg", "one argument of the resume command line, may hold {sessionId} and {prompt} (repeatable)")
	fs.StringVar(&resumeArgs, "resume-args", "", "the resume arguments as one shell-quoted string")
	fs.Var(&staleCheck, "stale-check", "check it for silence: silent past the project's threshold with no CPU use (default: on)")
	onStale := fs.String("on-stale", "", "what a silent agent gets: flag (Needs you, left running), restart, or resume (default: resume for Claude and Codex, flag for any other command)")
	perms := fs.String("permissions", "", "run it sandboxed with these grants, comma-separated: @network, @write:/abs/folder (implies --sandbox)")
	var maxUsd optUsd
	var maxTurns optInt
	fs.Var(&maxUsd, "max-budget-usd", "pause it when one run costs this many dollars")
	fs.Var(&maxTurns, "max-turns", "pause it when one run takes this many turns")
	sandboxed := fs.Bool("sandbox", false, "run it sandboxed: no network, no writes but its log, plus what --permissions grants")
	wt := addWorktreeFlags(fs)
	return func(e *env, pos, tail []string) error {
		var pre *presets.Preset
		if *preset != "" {
			p, err := presets.Lookup(*preset)
			if err != nil {
				return usagef("--preset: %v", err)
			}
			pre = &p
		} else if len(tail) == 0 {
			return usagef("create: the command to run is missing (put it after --), or use --preset %s", strings.Join(presets.Names(), "|"))
		} else if *prompt != "" || *model != "" {
			return usagef("--prompt and --model go with --preset")
		}
		spec := supervisor.AgentSpec{
			ID:                 pos[1],
			Name:               *name,
			Profile:            *profile,
			KeepAlive:          *keepAlive,
			AutoStartOnRestore: *autoStart,
			TimeoutSec:         int(timeout),
			GraceSec:           int(grace),
			StaleCheck:         staleCheck.v,
			OnStale:            *onStale,
		}
		if maxUsd.v != nil {
			spec.MaxBudgetUsd = *maxUsd.v
		}
		if maxTurns.v != nil {
			spec.MaxTurns = *maxTurns.v
		}
		if *sandboxed || *perms != "" {
			tags := splitTags(*perms)
			spec.Permissions = &tags
		}
		if *cwd != "" {
			abs, err := filepath.Abs(*cwd)
			if err != nil {
				return err
			}
			spec.Cwd = abs
		}
		for _, kv := range envs {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return usagef("--env %q: want KEY=VALUE", kv)
			}
			if spec.Env == nil {
				spec.Env = map[string]string{}
			}
			spec.Env[k] = v
		}
		if pre != nil {
			// The preset's command line; what follows -- is extra options.
			spec.Command = pre.Command
			spec.Args, spec.ResumeArgs = pre.Args(*prompt, *model, tail)
			if spec.Profile == "" {
				spec.Profile = pre.Profile
			}
		} else {
			spec.Command, spec.Args = tail[0], tail[1:]
		}
		if resumeArgs != "" {
			if len(resumeArg) > 0 {
				return usagef("use either --resume-arg (repeated) or --resume-args, not both")
			}
			words, err := splitWords(resumeArgs)
			if err != nil {
				return usagef("--resume-args: %v", err)
			}
			spec.ResumeArgs = words
		} else if len(resumeArg) > 0 {
			spec.ResumeArgs = []string(resumeArg)
		}
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		if err := wt.apply(e, id, &spec, pre != nil); err != nil {
			return err
		}
		out, human, err := fetch(e, api.CreateAgent, api.CreateAgentIn{Project: id, Body: spec})
		if !human {
			return err
		}
		r := out.Body
		fmt.Fprintf(e.stdout, "Created agent %s in project %s; not started yet (shepherd start %s %s).\n", r.ID,
			e.projectNames().of(r.ProjectID), e.projectNames().of(r.ProjectID), r.ID)
		printWorktreeMade(e.stdout, r)
		return nil
	}
}

// splitTags splits a comma-separated list of permission tags.
func splitTags(s string) []string {
	tags := []string{}
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	return tags
}

// specOf is the spec that re-creates r's user-set fields, for an edit that
// changes one of them.
func specOf(r *store.Record) supervisor.AgentSpec {
	s := supervisor.AgentSpec{ID: r.ID, Name: r.Name, Command: r.Command, Args: r.Args, Env: r.Env, Cwd: r.Cwd,
		Profile: r.Profile, ResumeArgs: r.ResumeArgs, CompletionPattern: r.CompletionPattern, ErrorPattern: r.ErrorPattern,
		KeepAlive: r.KeepAlive, AutoStartOnRestore: r.AutoStartOnRestore, TimeoutSec: r.TimeoutSec, GraceSec: r.GraceSec,
		StaleCheck: r.StaleCheck, OnStale: r.OnStale, Parent: r.Parent, StopWithParent: r.StopWithParent}
	s.MaxBudgetUsd, s.MaxTurns = r.MaxBudgetUsd, r.MaxTurns
	if r.Sandbox != nil {
		p := append([]string{}, r.Sandbox.Permissions...)
		s.Permissions = &p
	}
	return s
}

func setupSandbox(fs *flag.FlagSet) runFunc {
	perms := fs.String("permissions", "", "the grants, comma-separated: @network, @write:/abs/folder (empty: none at all)")
	off := fs.Bool("off", false, "run the agent unsandboxed again")
	return func(e *env, pos, _ []string) error {
		set := false
		fs.Visit(func(f *flag.Flag) { set = set || f.Name == "permissions" })
		if set == *off {
			return usagef("sandbox: give either --permissions TAGS (\"\" for none) or --off")
		}
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		// The record as stored, secrets unmasked: the edit sends it back whole.
		cur, _, err := call(e, api.GetAgent, api.AgentIn{Project: id, Agent: pos[1]}, api.Reveal(true))
		if err != nil {
			return err
		}
		spec := specOf(cur.Body)
		if *off {
			spec.Permissions = nil
		} else {
			tags := splitTags(*perms)
			spec.Permissions = &tags
		}
		out, human, err := fetch(e, api.UpdateAgent, api.UpdateAgentIn{Project: id, Agent: pos[1], Body: spec})
		if !human {
			return err
		}
		fmt.Fprintf(e.stdout, "Agent %s: %s\n", out.Body.ID, sandboxText(out.Body.Sandbox))
		return nil
	}
}

// sandboxText says in plain words how an agent is sandboxed.
func sandboxText(g *sandbox.Grants) string {
	if g == nil {
		return "not sandboxed"
	}
	s := "sandboxed: " + g.Describe()
	if len(g.Permissions) > 0 {
		s += " (" + strings.Join(g.Permissions, ", ") + ")"
	}
	return s
}

// agentAction calls an agent's action and prints say(record), or the raw
// answer with --json.
func agentAction(op *api.Op[api.AgentIn, api.Reply[*store.Record]], say func(r store.Record) string) runFunc {
	return func(e *env, pos, _ []string) error {
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
	}
}

var (
	cmdStart = agentAction(api.StartAgent, func(r store.Record) string {
		return "Started " + r.ID + ": " + runText(&r) + "."
	})
	cmdAck = agentAction(api.AckAgent, func(r store.Record) string {
		return fmt.Sprintf("Acknowledged %s: it is %s and no longer needs you, until it fails again.", r.ID, r.Status)
	})
	cmdResume = agentAction(api.ResumeAgent, func(r store.Record) string {
		return fmt.Sprintf("Resumed %s, session %s: %s.", r.ID, dash(r.SessionID), runText(&r))
	})
)

func setupPause(fs *flag.FlagSet) runFunc {
	now := fs.Bool("now", false, "do not wait for a tool call in flight to finish")
	note := fs.String("note", "", "why (shown with the pause)")
	return func(e *env, pos, _ []string) error {
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		in := &api.PauseInput{Note: *note, Now: *now}
		if len(pos) == 2 {
			out, human, err := fetch(e, api.PauseAgent, api.PauseAgentIn{Project: id, Agent: pos[1], Body: in})
			if !human {
				return err
			}
			fmt.Fprintf(e.stdout, "Paused %s (session %s kept).\n", out.Body.ID, dash(out.Body.SessionID))
			return nil
		}
		out, human, err := fetch(e, api.PauseProject, api.PauseProjectIn{Project: id, Body: in})
		if !human {
			return err
		}
		res := out.Body
		failed := 0
		for _, r := range res {
			if r.Error != "" {
				failed++
				fmt.Fprintf(e.stderr, "%s: %s\n", r.AgentID, r.Error)
			}
		}
		fmt.Fprintf(e.stdout, "Project paused; %d agent(s) paused. Nothing of it starts until: shepherd unpause %s\n", len(res)-failed, pos[0])
		if failed > 0 {
			return fmt.Errorf("%d agent(s) could not be paused", failed)
		}
		return nil
	}
}

func cmdUnpause(e *env, pos, _ []string) error {
	id, err := e.resolveProject(pos[0])
	if err != nil {
		return err
	}
	if len(pos) == 2 {
		out, human, err := fetch(e, api.UnpauseAgent, api.AgentIn{Project: id, Agent: pos[1]})
		if !human {
			return err
		}
		fmt.Fprintf(e.stdout, "Resumed %s (%s).\n", out.Body.ID, statusText(out.Body))
		return nil
	}
	out, human, err := fetch(e, api.UnpauseProject, api.ProjectIn{Project: id})
	if !human {
		return err
	}
	v := out.Body
	fmt.Fprintf(e.stdout, "Project resumed: %s running, %d queued.\n", liveText(v), v.Queued)
	return nil
}

// settingKeys are the settings the CLI can change, by their API names.
var settingKeys = []struct{ name, doc string }{
	{"watchdogIntervalSec", "seconds between watchdog checks"},
	{"staleCheckIntervalSec", "seconds between stale checks"},
	{"staleThresholdSec", "seconds of log silence after which a running agent is stale"},
	{"busyThresholdSec", "seconds a silent agent may stay busy (a tool in flight, CPU) before it is stale (0: never)"},
	{"safePointWaitSec", "seconds a pause waits for a tool call in flight to finish"},
	{"resultGraceSec", "seconds a Claude agent may live on after its result line"},
	{"autoResumeLimit", "auto-resumes allowed before giving up"},
	{"pausedExpiryDays", "days after which a paused agent expires"},
	{"maxRunning", "agents allowed to run at once (0: no limit)"},
	{"boxMaxProcesses", "processes and threads each sandboxed agent's box may run (0: no limit)"},
	{"boxMemoryMiB", "MiB of memory each sandboxed agent's box may use (0: no limit)"},
	{"boxShmMiB", "MiB of /dev/shm (its TMPDIR) each sandboxed agent's box gets (0: the kernel's default)"},
	{"logMaxMiB", "MiB an agent's log file may reach before it is rotated (agent.log → agent.log.1); from the next start"},
	{"logKeep", "rotated log files kept per agent (agent.log.1 … .N; 0: none); from the next start"},
}

// settingUsds are the settings in dollars.
var settingUsds = []struct{ name, doc string }{
	{"dailyBudgetUsd", "dollars the project's runs may cost a day (0: no limit)"},
}

var settingBools = []struct{ name, doc string }{
	{"notifyNative", "native desktop notifications (true/false)"},
	{"notifyCompletion", "notify when an agent completes (true/false)"},
}

func setupSettings(fs *flag.FlagSet) runFunc {
	ints := map[string]*optInt{}
	for _, k := range settingKeys {
		ints[k.name] = &optInt{}
		fs.Var(ints[k.name], k.name, k.doc)
	}
	usds := map[string]*optUsd{}
	for _, k := range settingUsds {
		usds[k.name] = &optUsd{}
		fs.Var(usds[k.name], k.name, k.doc)
	}
	bools := map[string]*string{}
	for _, k := range settingBools {
		bools[k.name] = fs.String(k.name, "", k.doc)
	}
	return func(e *env, pos, _ []string) error {
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		change := map[string]any{}
		for name, v := range ints {
			if v.v != nil {
				change[name] = *v.v
			}
		}
		for name, v := range usds {
			if v.v != nil {
				change[name] = *v.v
			}
		}
		for name, v := range bools {
			if *v == "" {
				continue
			}
			b, err := strconv.ParseBool(*v)
			if err != nil {
				return usagef("--%s: want true or false, not %q", name, *v)
			}
			change[name] = b
		}
		cur, raw, err := call(e, api.GetSettings, api.ProjectIn{Project: id})
		if err != nil {
			return err
		}
		if len(change) > 0 {
			// The changes over the settings as they are: the engine keeps
			// what is not given the same way.
			b, _ := json.Marshal(change)
			s := cur.Body
			if err := json.Unmarshal(b, &s); err != nil {
				return err
			}
			if _, raw, err = call(e, api.PutSettings, api.PutSettingsIn{Project: id, Body: s}); err != nil {
				return err
			}
		}
		if e.json {
			e.printRaw(raw)
			return nil
		}
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		for _, k := range settingKeys {
			fmt.Fprintf(tw, "%s\t%v\n", k.name, m[k.name])
		}
		for _, k := range settingUsds {
			fmt.Fprintf(tw, "%s\t%v\n", k.name, m[k.name])
		}
		for _, k := range settingBools {
			fmt.Fprintf(tw, "%s\t%v\n", k.name, m[k.name])
		}
		return tw.Flush()
	}
}

func setupStop(fs *flag.FlagSet) runFunc {
	var grace optInt
	fs.Var(&grace, "grace", "seconds between SIGTERM and SIGKILL (default: the agent's own)")
	return func(e *env, pos, _ []string) error {
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
}

func setupRemove(fs *flag.FlagSet) runFunc {
	force := fs.Bool("force", false, "stop the agent first if it is running")
	deleteLog := fs.Bool("delete-log", false, "delete its log too")
	wt := addRemoveFlags(fs)
	return func(e *env, pos, _ []string) error {
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
}

func cmdStopAll(e *env, pos, _ []string) error {
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

// --- dashboard

func setupPs(fs *flag.FlagSet) runFunc {
	once := fs.Bool("once", false, "print one sample and quit (as when the output is not a terminal)")
	wide := fs.Bool("wide", false, "every column, whole (the log paths too), however wide the terminal")
	return func(e *env, pos, tail []string) error {
		e.wide = *wide
		if len(pos) == 0 && !*once && !e.json && isTerminal(e.stdout) {
			return e.livePs()
		}
		return cmdPs(e, pos, tail)
	}
}

func cmdPs(e *env, pos, _ []string) error {
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

func cmdStatus(e *env, _, _ []string) error {
	out, human, err := fetch(e, api.GetEngine, api.NoInput{})
	if !human {
		return err
	}
	st := out.Body
	fmt.Fprintf(e.stdout, "Engine running at %s (pid %d, version %s)\n", e.client.BaseURL, st.PID, st.Version)
	if st.Sandbox != nil {
		verdict := "every grant can be enforced"
		if !st.Sandbox.Full() {
			verdict = "sandboxed agents that need what is missing will not start"
		}
		fmt.Fprintf(e.stdout, "Sandbox: %s (%s)\n", st.Sandbox.Summary(), verdict)
	}
	return nil
}

// --- logs and events

func setupLogs(fs *flag.FlagSet) runFunc {
	var n nonNegInt
	fs.Var(&n, "n", "print only the last N lines (0: the engine's default, the last 1000)")
	follow := fs.Bool("f", false, "keep printing new output until Ctrl-C")
	fs.BoolVar(follow, "follow", false, "same as -f")
	return func(e *env, pos, _ []string) error {
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		out, _, err := call(e, api.GetLog, api.LogIn{Project: id, Agent: pos[1], Tail: int(n)})
		if err != nil {
			return err
		}
		if _, err := e.stdout.Write(out.Body); err != nil {
			return err
		}
		if !*follow {
			return nil
		}
		return e.followLog(id, pos[1], out.Offset)
	}
}

// followPoll is how often `logs -f` asks for new output.
var followPoll = 250 * time.Millisecond

// followLog polls the log from offset on until the context ends (Ctrl-C),
// which is a normal end.
func (e *env) followLog(project, agent string, off int64) error {
	t := time.NewTicker(followPoll)
	defer t.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return nil
		case <-t.C:
		}
		more, _, err := call(e, api.GetLog, api.LogIn{Project: project, Agent: agent, Since: api.Some(off)})
		if err != nil {
			if e.ctx.Err() != nil {
				return nil
			}
			return err
		}
		if len(more.Body) > 0 {
			if _, err := e.stdout.Write(more.Body); err != nil {
				return err
			}
		}
		off = more.Offset
	}
}

func setupEvents(fs *flag.FlagSet) runFunc {
	follow := fs.Bool("f", false, "print the engine's live events as they happen, until Ctrl-C")
	fs.BoolVar(follow, "follow", false, "same as -f")
	return func(e *env, pos, tail []string) error {
		if *follow {
			return e.streamEvents(pos)
		}
		if len(pos) == 0 {
			return &usageError{"events needs a project (or -f for the live events)"}
		}
		return cmdEvents(e, pos, tail)
	}
}

// streamEvents prints the live events (of one project, with pos) until
// Ctrl-C; with --json, one JSON object a line.
func (e *env) streamEvents(pos []string) error {
	var in api.StreamIn
	if len(pos) == 1 {
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		in.Project = id
	}
	c, err := e.connect()
	if err != nil {
		return err
	}
	names := e.projectNames()
	err = c.Stream(e.ctx, in, func(ev api.StreamEvent) error {
		if ev.Name == "hello" {
			fmt.Fprintln(e.stderr, "Following the engine's events (Ctrl-C to stop)…")
			return nil
		}
		if e.json {
			b, _ := json.Marshal(map[string]any{"id": ev.ID, "event": ev.Name, "data": json.RawMessage(ev.Data)})
			_, err := fmt.Fprintf(e.stdout, "%s\n", b)
			return err
		}
		_, err := fmt.Fprintln(e.stdout, describeEvent(ev, func(id string) string {
			if _, ok := names[id]; !ok && id != "" {
				names = e.projectNames() // a project added since
			}
			return names.of(id)
		}))
		return err
	})
	if e.ctx.Err() != nil {
		return nil // Ctrl-C: a normal end
	}
	if errors.Is(err, api.ErrUnreachable) {
		return fmt.Errorf("the engine went away: %w", err)
	}
	return err
}

// describeEvent is one line a person reads: the time, the event and what it
// says.
func describeEvent(ev api.StreamEvent, project func(id string) string) string {
	now := time.Now().Format("15:04:05")
	var d struct {
		ProjectID string   `json:"projectId"`
		ID        string   `json:"id"`
		AgentID   string   `json:"agentId"`
		Status    string   `json:"status"`
		Reason    string   `json:"exitReason"`
		Title     string   `json:"title"`
		Message   string   `json:"message"`
		Total     int      `json:"total"`
		Lines     []string `json:"lines"`
	}
	_ = json.Unmarshal(ev.Data, &d)
	p := project(d.ProjectID) // by its name
	switch ev.Name {
	case "agent:state":
		s := fmt.Sprintf("%s  %-14s %s/%s  %s", now, ev.Name, p, d.ID, d.Status)
		if d.Reason != "" {
			s += " (" + d.Reason + ")"
		}
		return s
	case "agent:removed":
		return fmt.Sprintf("%s  %-14s %s/%s", now, ev.Name, p, d.AgentID)
	case "notify":
		return fmt.Sprintf("%s  %-14s %s/%s  %s: %s", now, ev.Name, p, d.AgentID, d.Title, d.Message)
	case "project:synced":
		return fmt.Sprintf("%s  %-14s %s  %d agents checked", now, ev.Name, p, d.Total)
	case "agent:log":
		return fmt.Sprintf("%s  %-14s %s/%s  %d lines", now, ev.Name, p, d.AgentID, len(d.Lines))
	}
	return fmt.Sprintf("%s  %-14s %s", now, ev.Name, ev.Data)
}

// cmdQuit asks the engine to quit and waits until it has.
func cmdQuit(e *env, _, _ []string) error {
	c, err := e.connect()
	if err != nil {
		return err
	}
	out, _, err := call(e, api.QuitEngine, api.NoInput{})
	if err != nil {
		return err
	}
	ans := out.Body
	for deadline := time.Now().Add(45 * time.Second); time.Now().Before(deadline); {
		if _, err := api.Call(e.ctx, c, api.GetEngine, api.NoInput{}); errors.Is(err, api.ErrUnreachable) {
			if !e.json {
				fmt.Fprintf(e.stdout, "Shepherd (pid %d) has quit.\n", ans.PID)
			}
			return nil
		}
		select {
		case <-e.ctx.Done():
			return e.ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("the engine (pid %d) was asked to quit but still answers after 45 s", ans.PID)
}

func cmdEvents(e *env, pos, _ []string) error {
	id, err := e.resolveProject(pos[0])
	if err != nil {
		return err
	}
	out, _, err := call(e, api.ListEvents, api.EventsIn{Project: id})
	if err != nil {
		return err
	}
	if e.json {
		_, err := e.stdout.Write(out.Body)
		return err
	}
	lines := strings.Split(strings.TrimRight(string(out.Body), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		fmt.Fprintln(e.stdout, "No events yet.")
		return nil
	}
	tw := e.table()
	fmt.Fprintln(tw, "TIME\tEVENT\tAGENT\tFROM\tTO\tREASON\tDATA")
	for _, l := range lines {
		var ev store.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Event == "" {
			fmt.Fprintf(tw, "%s\n", l)
			continue
		}
		data := ""
		if len(ev.Data) > 0 {
			b, _ := json.Marshal(ev.Data)
			data = string(b)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ev.Time.Local().Format("2006-01-02 15:04:05.000"),
			ev.Event, dash(ev.AgentID), dash(ev.From), dash(ev.To), dash(ev.Reason), data)
	}
	return tw.Flush()
}

// --- serve

func setupServe(fs *flag.FlagSet) runFunc {
	listen := fs.String("listen", api.DefaultListen, "loopback address to listen on (port 0: a free one)")
	socket := fs.Bool("socket", false, "listen only on a Unix socket (0600) in the runtime folder, never on TCP (a host's engine, reached over SSH)")
	return func(e *env, _, _ []string) error {
		if *socket {
			// --listen's default is not a choice; a --listen given is.
			addr := ""
			fs.Visit(func(f *flag.Flag) {
				if f.Name == "listen" {
					addr = *listen
				}
			})
			return Serve(e.ctx, ServeOptions{Listen: addr, Socket: true, Console: e.stderr})
		}
		return Serve(e.ctx, ServeOptions{Listen: *listen, Console: e.stderr})
	}
}

// --- formatting

// projectNameMap names projects by their id, for tables.
type projectNameMap map[string]string

func (m projectNameMap) of(id string) string {
	if n, ok := m[id]; ok && n != "" {
		return n
	}
	return id
}

// projectNames asks the engine for the names of the known projects (empty
// when it cannot: the ids are shown then).
func (e *env) projectNames() projectNameMap {
	m := projectNameMap{}
	if out, _, err := call(e, api.ListProjects, api.NoInput{}); err == nil {
		for _, p := range out.Body {
			m[p.ID] = p.Name
		}
	}
	return m
}

// projectText names a project for a sentence: its name and, as two may share
// a name, its folder ("twin (/src/twin)"); its id when it is not known.
func (e *env) projectText(id string) string {
	if out, _, err := call(e, api.ListProjects, api.NoInput{}); err == nil {
		for _, p := range out.Body {
			if p.ID == id && p.Name != "" {
				return p.Name + " (" + p.Path + ")"
			}
		}
	}
	return id
}

// liveText is a project's live agents and its cap: "3", "2/2".
func liveText(p supervisor.ProjectView) string {
	if p.MaxRunning > 0 {
		return fmt.Sprintf("%d/%d", p.Live, p.MaxRunning)
	}
	return strconv.Itoa(p.Live)
}

// pauseText says whether a project is paused, since when and why.
func pauseText(p supervisor.ProjectView) string {
	if p.FolderMissing != "" {
		return "folder missing"
	}
	if !p.Paused {
		return "active"
	}
	s := "paused"
	if p.PausedAt != nil {
		s += " since " + p.PausedAt.Local().Format("Jan 2 15:04")
	}
	if p.PauseNote != "" {
		s += ": " + p.PauseNote
	}
	return s
}

// statusText is a status as people read it: "queued · 2nd".
func statusText(r *store.Record) string {
	if r.Status == "queued" && r.QueuePosition > 0 {
		return "queued · " + ordinal(r.QueuePosition)
	}
	if r.Status == "paused" && r.BudgetPause != "" {
		return "paused · budget reached"
	}
	return string(r.Status)
}

// runText says where a started agent is: "running, pid 4242", "queued,
// 2nd in line", or its status.
func runText(r *store.Record) string {
	switch {
	case r.Status == "queued" && r.QueuePosition > 0:
		return "queued, " + ordinal(r.QueuePosition) + " in line"
	case r.Status.Live() && r.PID > 0:
		return fmt.Sprintf("%s, pid %d", r.Status, r.PID)
	}
	return string(r.Status)
}

// endText says how a stopped agent ended: "stopped", "failed (exit code 1)".
func endText(r *store.Record) string {
	s := string(r.Status)
	switch {
	case r.ExitCode != nil && *r.ExitCode != 0:
		s += fmt.Sprintf(" (exit code %d)", *r.ExitCode)
	case r.Signal != "" && r.Status != "stopped":
		s += " (" + r.Signal + ")"
	}
	return s
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// activityText says what a running agent is doing, as the window does:
// "working", "busy · Bash 6 min", "silent 3 min", "stale 12 min".
func activityText(a *store.Activity, now time.Time) string {
	if a == nil {
		return ""
	}
	since := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return " " + durationText(now.Sub(*t))
	}
	switch a.State {
	case store.ActivityBusy:
		tool := a.Tool
		if tool == "cpu" {
			tool = "using CPU"
		}
		return "busy · " + tool + since(a.ToolSince)
	case store.ActivitySilent, store.ActivityStale:
		return a.State + since(a.Since)
	case store.ActivityWaiting:
		return "waiting: " + a.Waiting
	}
	return a.State
}

// durationText is a short human duration: "40 s", "6 min", "2 h 5 min".
func durationText(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	default:
		return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func pidText(pid int) string {
	if pid == 0 {
		return "-"
	}
	return strconv.Itoa(pid)
}

func exitText(code *int, signal string) string {
	switch {
	case signal != "":
		return signal
	case code != nil:
		return strconv.Itoa(*code)
	}
	return "-"
}

func timeText(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func optTime(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return timeText(t)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func commandText(cmd string, args []string) string {
	return strings.Join(quoteAll(append([]string{cmd}, args...)), " ")
}

// quoteAll quotes the words that a shell would split or expand.
func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			w = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		out[i] = w
	}
	return out
}
