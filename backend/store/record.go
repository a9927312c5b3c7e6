// Package store keeps Shepherd's durable state on disk: the list of known
// projects, one record.json per agent, each project's events.jsonl, and the
// exit status a shim leaves next to a record. Every write of a record is
// atomic (temp file, fsync, rename); a record that cannot be read is moved
// aside and reported, never fatal.
package store

import (
	"shepherd/backend/sandbox"
	"time"

	"shepherd/backend/lifecycle"
	"shepherd/backend/workspace"
)

// Profiles name how an agent's log is read.
const (
	ProfileGeneric    = "generic"
	ProfileClaudeJSON = "claude-stream-json"
	ProfileCodexJSON  = "codex-json"
)

// Structured reports whether a profile's log is JSON events the engine
// follows (session id, result, tool calls in flight): Claude Code's and
// Codex's.
func Structured(profile string) bool {
	return profile == ProfileClaudeJSON || profile == ProfileCodexJSON
}

// DefaultGraceSec is the stop grace of SPEC when none is set.
const DefaultGraceSec = 10

// Record is the durable JSON of one agent (SPEC "The record").
type Record struct {
	ID                 string            `json:"id"`
	ProjectID          string            `json:"projectId"`
	Name               string            `json:"name,omitempty"`
	Command            string            `json:"command"`
	Args               []string          `json:"args"`
	Env                map[string]string `json:"env,omitempty"`
	Cwd                string            `json:"cwd"`
	Profile            string            `json:"profile"`
	ResumeArgs         []string          `json:"resumeArgs,omitempty"`
	SessionID          string            `json:"sessionId,omitempty"`
	CompletionPattern  string            `json:"completionPattern,omitempty"` // generic profile
	ErrorPattern       string            `json:"errorPattern,omitempty"`      // generic profile
	KeepAlive          bool              `json:"keepAlive"`
	AutoStartOnRestore bool              `json:"autoStartOnRestore"`
	TimeoutSec         int               `json:"timeoutSec"`
	GraceSec           int               `json:"graceSec"`
	// ResumePrompt is the prompt the agent's next resume brings, pending
	// (queued) until it runs: an instruction from Shepherd (resolve the
	// conflicts of a merge of its base). Cleared by that resume.
	ResumePrompt string `json:"resumePrompt,omitempty"`
	// UsageLimitUntil: the agent is paused by its account's usage limit
	// (a subscription window that ran out) and resumes in its session
	// after this reset, by itself (SPEC "Answers").
	UsageLimitUntil *time.Time `json:"usageLimitUntil,omitempty"`

	Status     lifecycle.Status     `json:"status"`
	ExitReason lifecycle.ExitReason `json:"exitReason,omitempty"`
	ExitCode   *int                 `json:"exitCode,omitempty"`
	Signal     string               `json:"signal,omitempty"`
	Error      string               `json:"error,omitempty"`

	PID              int    `json:"pid,omitempty"`
	ProcessStartTime int64  `json:"processStartTime,omitempty"` // ms since epoch, as the OS reports it
	ShimPID          int    `json:"shimPid,omitempty"`
	ShimStartTime    int64  `json:"shimStartTime,omitempty"` // the shim's OS start time, ms
	BootID           string `json:"bootId,omitempty"`
	// PreviousStatus is the status a spawning agent goes back to if its
	// spawn never happened (an engine that died between recording the shim
	// and letting it start the agent).
	PreviousStatus lifecycle.Status  `json:"previousStatus,omitempty"`
	Desired        lifecycle.Desired `json:"desired"`
	Attached       bool              `json:"attached"`

	CreatedAt      time.Time  `json:"createdAt"`
	StartedAt      *time.Time `json:"startedAt,omitempty"`
	StoppedAt      *time.Time `json:"stoppedAt,omitempty"`
	LastActivityAt *time.Time `json:"lastActivityAt,omitempty"`

	RestartCount        int        `json:"restartCount"`
	RestartFailureCount int        `json:"restartFailureCount"`
	NextRestartAt       *time.Time `json:"nextRestartAt,omitempty"`
	AutoResumeCount     int        `json:"autoResumeCount"`
	ResumeCount         int        `json:"resumeCount"`
	// RunCount is how many runs the engine started: every start, resume,
	// keep-alive restart and unpause that got a process (the Runs column).
	// A record from before it was kept starts from what the record shows.
	RunCount  int        `json:"runCount,omitempty"`
	PausedAt  *time.Time `json:"pausedAt,omitempty"`
	PauseNote string     `json:"pauseNote,omitempty"`
	// PausedWithProject: paused by its project's pause (the project's
	// unpause resumes it), not on its own.
	PausedWithProject bool `json:"pausedWithProject,omitempty"`
	// The run queue (SPEC "Pause and resume"): a queued agent's place
	// (QueueSeq, increasing per project), what runs when its turn comes
	// (QueuedAction) and the status it came from (QueuedFrom), which a
	// cancelled queued start returns to.
	QueueSeq     int64            `json:"queueSeq,omitempty"`
	QueuedAction string           `json:"queuedAction,omitempty"`
	QueuedFrom   lifecycle.Status `json:"queuedFrom,omitempty"`
	StaleCheck   *bool            `json:"staleCheck,omitempty"`
	// Parent is the agent that created this one through the MCP server;
	// StopWithParent (nil: true) stops it when the parent is removed.
	Parent string `json:"parent,omitempty"`
	// CredentialHash is the hash of the secret given to the agent's current
	// run (package supervisor, identity.go): how the API knows a request
	// comes from this agent.
	CredentialHash string `json:"credentialHash,omitempty"`
	StopWithParent *bool  `json:"stopWithParent,omitempty"`
	// Sandbox is the agent's grants when it runs sandboxed (nil: it does
	// not); the same as its sandbox.json, which the shim enforces.
	Sandbox *sandbox.Grants `json:"sandbox,omitempty"`
	// Workspace is the agent's own git worktree, when it runs in one.
	Workspace *workspace.Workspace `json:"workspace,omitempty"`
	Stale     bool                 `json:"stale,omitempty"` // silent past the threshold and left running
	// OnStale is what a stale agent gets: "flag" (Needs you and a
	// notification, left running), "restart" (killed and started again with
	// its args) or "resume" (log analysis, then killed and resumed when it
	// can be). Empty: resume for claude-stream-json and codex-json agents,
	// flag for the others.
	OnStale string `json:"onStale,omitempty"`
	// AcknowledgedAt is when the user acknowledged what this agent needed of
	// them (a failure, silence): it leaves Needs you until it needs the user
	// again (the next failure clears it).
	AcknowledgedAt *time.Time `json:"acknowledgedAt,omitempty"`
	// AckLoop is the crash loop an acknowledgment covers: how its runs end
	// ("failed/1/", from ExitReason, ExitCode and Signal; "?" until the
	// first end after the acknowledgment). While the loop goes on ending
	// that way it stays acknowledged; it needs the user again when it
	// changes, and the acknowledgment ends with the loop.
	AckLoop string `json:"ackLoop,omitempty"`
	LogPath string `json:"logPath"`

	// Activity is what a running agent is doing, as the engine sees it now.
	// It is computed, never stored: a record on disk has none.
	Activity *Activity `json:"activity,omitempty"`
	// QueuePosition is a queued agent's place in its project's queue, from
	// 1 (computed, never stored).
	QueuePosition int `json:"queuePosition,omitempty"`
	// Stats is the latest CPU and memory sample of its process tree, while
	// someone looks (computed, never stored).
	Stats *Stats `json:"stats,omitempty"`
	// Attention is why the agent needs the user now, in a few words ("failed",
	// "waiting: permission for Bash", "crash loop: …"); empty when it does
	// not or the user acknowledged it (computed, never stored).
	Attention string `json:"attention,omitempty"`

	// LastResult is what the latest run that reported its figures cost;
	// Totals, what every such run of this agent cost, resumes included.
	LastResult *RunFigures `json:"lastResult,omitempty"`
	Totals     *RunFigures `json:"totals,omitempty"`
	// TreeTotals is what the agents this one created (through the API or
	// MCP), and theirs, reported of their runs: claims made from inside
	// their boxes, counted against this tree only — never toward the
	// project's daily budget (computed, never stored).
	TreeTotals *RunFigures `json:"treeTotals,omitempty"`

	// Budgets (SPEC "Workspaces and budgets"), per run; 0: none.
	// MaxBudgetUsd caps what one run (a start, resume or restart) may cost,
	// MaxTurns its turns, as its log reports them.
	MaxBudgetUsd float64 `json:"maxBudgetUsd,omitempty"`
	MaxTurns     int     `json:"maxTurns,omitempty"`
	// BudgetPause is which budget paused the agent ("run", "turns",
	// "daily"; its pauseNote says by how much), until it runs again;
	// BudgetOnce, that its next (or current) run may go past its limits
	// once, as the user answered.
	BudgetPause string `json:"budgetPause,omitempty"`
	BudgetOnce  bool   `json:"budgetOnce,omitempty"`
}

// RunFigures is what a run cost, as its agent's log reports it (Claude's
// result line, Codex's turn.completed); summed in Totals.
type RunFigures struct {
	Runs              int      `json:"runs"` // 1 for one run; the count in Totals
	Turns             int      `json:"turns"`
	DurationMs        int64    `json:"durationMs"`
	CostUSD           *float64 `json:"costUsd,omitempty"` // only where the CLI reports it (Claude)
	InputTokens       int64    `json:"inputTokens"`
	CachedInputTokens int64    `json:"cachedInputTokens"`
	OutputTokens      int64    `json:"outputTokens"`
	ReasoningTokens   int64    `json:"reasoningOutputTokens,omitempty"`
	// At is when the run ended; Key tells one run from another, so a run
	// read again (after a restart) is not counted twice.
	At  *time.Time `json:"at,omitempty"`
	Key string     `json:"key,omitempty"`
}

// Add returns f plus g (Runs, turns, durations, tokens and costs summed;
// a cost is known if either knows one).
func (f *RunFigures) Add(g RunFigures) *RunFigures {
	out := RunFigures{}
	if f != nil {
		out = *f
		out.CostUSD = clonePtr(f.CostUSD)
	}
	out.Runs += max(g.Runs, 1)
	out.Turns += g.Turns
	out.DurationMs += g.DurationMs
	out.InputTokens += g.InputTokens
	out.CachedInputTokens += g.CachedInputTokens
	out.OutputTokens += g.OutputTokens
	out.ReasoningTokens += g.ReasoningTokens
	if g.CostUSD != nil {
		c := *g.CostUSD
		if out.CostUSD != nil {
			c += *out.CostUSD
		}
		out.CostUSD = &c
	}
	out.At, out.Key = clonePtr(g.At), ""
	return &out
}

// Stats is one sample of an agent's process tree.
type Stats struct {
	CPUPercent *float64  `json:"cpuPercent,omitempty"` // of one core, over the last interval (none on the first sample)
	RSSBytes   int64     `json:"rssBytes"`             // resident memory, summed over the tree
	Processes  int       `json:"processes"`
	SampledAt  time.Time `json:"sampledAt"`
}

// Activity states (SPEC "Stale check").
const (
	ActivityWorking = "working" // its log is growing
	ActivityBusy    = "busy"    // silent, but a tool call runs (or its processes use CPU)
	ActivitySilent  = "silent"  // its log has not grown for a while
	ActivityStale   = "stale"   // silent past the threshold with no sign of work
	// waiting for the user (a permission, input) or for a rate limit: said
	// by the agent itself (Claude Code's hooks, its api_retry lines), so
	// never stale
	ActivityWaiting = "waiting"
)

// Activity is what a running agent is doing.
type Activity struct {
	State string     `json:"state"`
	Since *time.Time `json:"since,omitempty"` // the log's last growth
	// Tool is the tool call in flight (busy), e.g. "Bash", or "cpu" when
	// only the CPU use of its processes says it works; ToolSince is when
	// it started.
	Tool      string     `json:"tool,omitempty"`
	ToolSince *time.Time `json:"toolSince,omitempty"`
	// Waiting is what a waiting agent waits for, in words ("permission for
	// Bash", "input", "rate limit until 14:05:00"); NeedsYou when the user
	// has something to do; Until when a rate limit is retried.
	Waiting  string     `json:"waiting,omitempty"`
	NeedsYou bool       `json:"needsYou,omitempty"`
	Until    *time.Time `json:"until,omitempty"`
}

// EventProjectID is the project the record belongs to, for the event bus
// (eventbus.Scoped): its JSON's projectId, known without reading the JSON.
func (r *Record) EventProjectID() string {
	if r == nil {
		return ""
	}
	return r.ProjectID
}

// Clone returns a deep copy, so a caller can change it without touching the
// registry's copy.
func (r *Record) Clone() *Record {
	c := *r
	c.Args = append([]string(nil), r.Args...)
	c.ResumeArgs = append([]string(nil), r.ResumeArgs...)
	if r.Env != nil {
		c.Env = make(map[string]string, len(r.Env))
		for k, v := range r.Env {
			c.Env[k] = v
		}
	}
	c.ExitCode = clonePtr(r.ExitCode)
	c.StartedAt = clonePtr(r.StartedAt)
	c.StoppedAt = clonePtr(r.StoppedAt)
	c.LastActivityAt = clonePtr(r.LastActivityAt)
	c.NextRestartAt = clonePtr(r.NextRestartAt)
	c.PausedAt = clonePtr(r.PausedAt)
	c.StaleCheck = clonePtr(r.StaleCheck)
	c.AcknowledgedAt = clonePtr(r.AcknowledgedAt)
	c.StopWithParent = clonePtr(r.StopWithParent)
	if r.Workspace != nil {
		w := *r.Workspace
		w.CheckedAt = clonePtr(w.CheckedAt)
		w.Conflicts = append([]string(nil), w.Conflicts...)
		c.Workspace = &w
	}
	if r.Sandbox != nil {
		g := *r.Sandbox
		g.WriteDirs = append([]string{}, g.WriteDirs...)
		g.Permissions = append([]string{}, g.Permissions...)
		c.Sandbox = &g
	}
	if r.LastResult != nil {
		lr := *r.LastResult
		lr.CostUSD, lr.At = clonePtr(lr.CostUSD), clonePtr(lr.At)
		c.LastResult = &lr
	}
	if r.Totals != nil {
		t := *r.Totals
		t.CostUSD, t.At = clonePtr(t.CostUSD), clonePtr(t.At)
		c.Totals = &t
	}
	if r.TreeTotals != nil {
		t := *r.TreeTotals
		t.CostUSD, t.At = clonePtr(t.CostUSD), clonePtr(t.At)
		c.TreeTotals = &t
	}
	if r.Stats != nil {
		st := *r.Stats
		st.CPUPercent = clonePtr(st.CPUPercent)
		c.Stats = &st
	}
	if r.Activity != nil {
		act := *r.Activity
		act.Since, act.ToolSince = clonePtr(act.Since), clonePtr(act.ToolSince)
		c.Activity = &act
	}
	return &c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// Ptr returns a pointer to v; records use pointers for optional fields.
func Ptr[T any](v T) *T { return &v }

// Project is a folder the user works in.
type Project struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Path      string    `json:"path"`
	CreatedAt time.Time `json:"createdAt"`
}

// Event is one line of a project's events.jsonl.
type Event struct {
	Time    time.Time      `json:"time"`
	Event   string         `json:"event"`
	AgentID string         `json:"agentId,omitempty"`
	From    string         `json:"from,omitempty"`
	To      string         `json:"to,omitempty"`
	Reason  string         `json:"reason,omitempty"`
	Data    map[string]any `json:"data,omitempty"`
}

// What a stale agent gets (Record.OnStale).
const (
	OnStaleFlag    = "flag"
	OnStaleRestart = "restart"
	OnStaleResume  = "resume"
)

// OnStaleOf is what r gets when stale: its own choice, else resume for the
// agent CLIs Shepherd can read (their log says whether they finished and
// they can be resumed), flag for any other command.
func OnStaleOf(r *Record) string {
	if r.OnStale != "" {
		return r.OnStale
	}
	if Structured(r.Profile) {
		return OnStaleResume
	}
	return OnStaleFlag
}
