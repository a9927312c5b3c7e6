package supervisor

import (
	"time"

	"shepherd/backend/store"
	"shepherd/backend/workspace"
)

// Emitter receives every pushed event (the GUI bridges it to Wails events;
// tests pass a recorder).
type Emitter interface {
	Emit(event string, data any)
}

// Event names pushed through the Emitter.
const (
	EventAgentState    = "agent:state"         // data: *store.Record after a transition
	EventProjectSynced = "project:synced"      // data: *SyncSummary
	EventAgentRemoved  = "agent:removed"       // data: AgentRef
	EventNotify        = "notify"              // data: notify.Notification
	EventProjectState  = "project:state"       // data: ProjectView, when a project is paused or resumed
	EventWhileClosed   = "engine:while-closed" // data: *WhileClosed, once the engine has loaded every project
)

// AgentRef names one agent.
type AgentRef struct {
	ProjectID string `json:"projectId"`
	AgentID   string `json:"agentId"`
}

// AgentSpec is what create takes: the user-set fields of a record.
type AgentSpec struct {
	ID                 string            `json:"id"`
	Name               string            `json:"name,omitempty"`
	Command            string            `json:"command"`
	Args               []string          `json:"args,omitempty"`
	Env                map[string]string `json:"env,omitempty"`
	Cwd                string            `json:"cwd,omitempty"` // default: the project folder
	Profile            string            `json:"profile,omitempty"`
	ResumeArgs         []string          `json:"resumeArgs,omitempty"`
	CompletionPattern  string            `json:"completionPattern,omitempty"`
	ErrorPattern       string            `json:"errorPattern,omitempty"`
	KeepAlive          bool              `json:"keepAlive,omitempty"`
	AutoStartOnRestore bool              `json:"autoStartOnRestore,omitempty"`
	TimeoutSec         int               `json:"timeoutSec,omitempty"`
	GraceSec           int               `json:"graceSec,omitempty"` // 0: default 10
	StaleCheck         *bool             `json:"staleCheck,omitempty"`
	// OnStale: flag, restart or resume (see store.Record.OnStale).
	OnStale string `json:"onStale,omitempty"`
	// Parent is the agent that created this one through the MCP server (its
	// id in the same project); StopWithParent (default true) stops this one
	// when the parent is removed.
	Parent         string `json:"parent,omitempty"`
	StopWithParent *bool  `json:"stopWithParent,omitempty"`
	// Permissions, when set (even empty), runs the agent sandboxed: no
	// network and no writes but its log, plus what the tags grant
	// ("@network", "@write:<absolute folder>"; "@read:*" is ignored). Nil:
	// not sandboxed — allowed only to the user.
	Permissions *[]string `json:"permissions,omitempty"`
	// Budgets per run (0: none): see store.Record.
	MaxBudgetUsd float64 `json:"maxBudgetUsd,omitempty"`
	MaxTurns     int     `json:"maxTurns,omitempty"`
	// Workspace {worktree: true, base: "main"} runs the agent in a git
	// worktree of its own on branch shepherd/<id>, made at create (only
	// Worktree and Base are read; an edit keeps the worktree it has).
	Workspace *workspace.Workspace `json:"workspace,omitempty"`
	// Caller is the agent on whose behalf this is created (set by the API
	// from the request's credential, never read from a body); nil: the
	// user. A caller grants at most what it holds itself, and what it
	// creates is always sandboxed.
	Caller *AgentRef `json:"-"`
}

// Outcome names of a sync, as counted in SyncSummary.Counts.
const (
	OutcomeRunning           = "running"             // supervised by this engine already
	OutcomeReattached        = "reattached"          // alive, same identity, adopted
	OutcomeExitedWhileClosed = "exited_while_closed" // dead, exit status known
	OutcomeUnknownExit       = "unknown_exit"        // dead, no exit status
	OutcomePIDReused         = "pid_reused"
	OutcomeOtherBoot         = "other_boot"
	OutcomeNeverStarted      = "never_started" // the engine stopped before the spawn happened
	OutcomeUnchanged         = "unchanged"     // not live, nothing to do
	OutcomeCorrupt           = "corrupt"
	OutcomeAutoStarted       = "auto_started"
	OutcomeKeepAlive         = "keep_alive_scheduled"
)

// AgentOutcome is what the sync did to one agent.
type AgentOutcome struct {
	AgentID  string `json:"agentId"`
	Outcome  string `json:"outcome"`
	Status   string `json:"status"`
	ExitCode *int   `json:"exitCode,omitempty"`
	Detail   string `json:"detail,omitempty"`
	Recovery string `json:"recovery,omitempty"` // what log analysis and recovery did
}

// CorruptRecord reports a record that could not be read and was moved aside.
type CorruptRecord struct {
	AgentID string `json:"agentId"`
	MovedTo string `json:"movedTo"`
	Problem string `json:"problem"`
}

// SyncSummary is the result of the load-time sanity check of one project.
type SyncSummary struct {
	ProjectID string          `json:"projectId"`
	Total     int             `json:"total"`
	Counts    map[string]int  `json:"counts"`
	Agents    []AgentOutcome  `json:"agents"`
	Corrupt   []CorruptRecord `json:"corrupt,omitempty"`
}

// WhileClosed is what an engine found at its start (SPEC "Attention": what
// happened while closed), for every project where something did.
type WhileClosed struct {
	At       time.Time     `json:"at"` // when the engine looked (its start)
	Projects []SyncSummary `json:"projects"`
}

// StopResult is one agent's outcome of stop-all.
type StopResult struct {
	AgentID string        `json:"agentId"`
	Record  *store.Record `json:"record,omitempty"`
	Error   string        `json:"error,omitempty"`
}
