// Package mcpserver is `shepherd mcp`: a Model Context Protocol server over
// stdio (the official Go SDK) through which a coding agent runs and watches
// its own long-lived processes — a dev server, a watcher, a test runner —
// durably, under Shepherd (seed 000's process lifecycle of an MCP server).
// It talks to the running engine through its HTTP API, so what an agent
// starts appears in the window like any agent, keeps running when the agent
// ends, and is found again after a restart.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shepherd/backend/api"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
)

// Limits of what a tool answers.
const (
	DefaultTail    = 100
	MaxTail        = 2000
	MaxWait        = 10 * time.Minute
	defaultWait    = 30 * time.Second
	waitPollPeriod = 100 * time.Millisecond
)

// Caller is the agent that runs this MCP server, when Shepherd started it:
// as the engine identified it by the agent's credential (GET /v1/whoami).
// It only picks the project; what the agent may do is the engine's
// decision, made from the credential on every call.
type Caller struct {
	ProjectID string
	AgentID   string
}

// Config is what a server needs.
type Config struct {
	// Engine is the running engine's API (nil: none, and EngineErr says
	// why; every tool then answers that error).
	Engine    *api.Client
	EngineErr error
	Cwd       string // the server's working folder: its project
	Caller    Caller
	Version   string
}

type server struct {
	cfg Config

	mu      sync.Mutex // tools are called concurrently
	project string     // resolved on first use
}

// New returns the MCP server with Shepherd's tools.
func New(cfg Config) *mcp.Server {
	s := &server{cfg: cfg}
	srv := mcp.NewServer(&mcp.Implementation{Name: "shepherd", Title: "Shepherd", Version: cfg.Version}, &mcp.ServerOptions{
		Instructions: "Shepherd runs and watches long-lived processes for you (dev servers, watchers, test runners) as durable " +
			"processes you can start, stop and read the logs of. Prefer it to running them in the background of a shell: " +
			"their output is kept, they are supervised, and they are stopped when you are removed. Processes are sandboxed " +
			"(no network, no writes but their log) unless you grant permissions.",
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "create_process", Description: "Register a process (not started). It runs in its own process group with its " +
		"output kept in a log file. By default it is sandboxed: no network and no writes except its log; grant " +
		"'@network' and '@write:<absolute folder>' in permissions as it needs (at most what you hold yourself)."}, s.create)
	mcp.AddTool(srv, &mcp.Tool{Name: "start_process", Description: "Start a registered process."}, s.start)
	mcp.AddTool(srv, &mcp.Tool{Name: "stop_process", Description: "Stop a running process: SIGTERM to its whole process group, " +
		"then SIGKILL after grace_period_ms (default: its own grace, 10 s)."}, s.stop)
	mcp.AddTool(srv, &mcp.Tool{Name: "remove_process", Description: "Forget a process (stopping it first if it runs). Its log is kept."}, s.remove)
	mcp.AddTool(srv, &mcp.Tool{Name: "list_processes", Description: "List the processes you created (all of the project's with all=true), with status, pid and log file."}, s.list)
	mcp.AddTool(srv, &mcp.Tool{Name: "get_process", Description: "One process: status, pid, exit code, the absolute path of its log, what it is doing."}, s.get)
	mcp.AddTool(srv, &mcp.Tool{Name: "read_log", Description: fmt.Sprintf("The last lines of a process's log (tail: default %d, at most %d).", DefaultTail, MaxTail)}, s.readLog)
	mcp.AddTool(srv, &mcp.Tool{Name: "wait_for_log", Description: "Wait until a line of the process's log (written from now on, or already in its last 200 lines) " +
		"matches a regular expression, e.g. \"ready on :3000\" — instead of sleeping. Answers the line, or that the time ran out " +
		fmt.Sprintf("(timeout_ms: default %d, at most %d), or that the process ended first.", defaultWait.Milliseconds(), MaxWait.Milliseconds())}, s.waitForLog)
	addAnswerTools(srv, s)
	return srv
}

// Process is a process as the tools answer it.
type Process struct {
	ID         string     `json:"id"`
	Status     string     `json:"status"`
	ExitReason string     `json:"exit_reason,omitempty"`
	PID        int        `json:"pid,omitempty"`
	ExitCode   *int       `json:"exit_code,omitempty"`
	Signal     string     `json:"signal,omitempty"`
	Error      string     `json:"error,omitempty"`
	Command    []string   `json:"command"`
	Cwd        string     `json:"cwd"`
	LogPath    string     `json:"log_path"`
	Activity   string     `json:"activity,omitempty"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	StoppedAt  *time.Time `json:"stopped_at,omitempty"`
	Parent     string     `json:"parent,omitempty"`
	KeepAlive  bool       `json:"keep_alive"`
	Restarts   int        `json:"restarts"`
	// Sandbox says in plain words what it may do ("unsandboxed" for one the
	// user created without a sandbox); Permissions are its grants' tags.
	Sandbox     string         `json:"sandbox"`
	Permissions []string       `json:"permissions,omitempty"`
	Extra       map[string]any `json:"extra,omitempty"`
}

func processOf(r *store.Record) Process {
	p := Process{ID: r.ID, Status: string(r.Status), ExitReason: string(r.ExitReason), PID: r.PID, ExitCode: r.ExitCode,
		Signal: r.Signal, Error: r.Error, Command: append([]string{r.Command}, r.Args...), Cwd: r.Cwd, LogPath: r.LogPath,
		StartedAt: r.StartedAt, StoppedAt: r.StoppedAt, Parent: r.Parent, KeepAlive: r.KeepAlive, Restarts: r.RestartCount,
		Sandbox: "unsandboxed"}
	if r.Sandbox != nil {
		p.Sandbox, p.Permissions = r.Sandbox.Describe(), r.Sandbox.Permissions
	}
	if r.Activity != nil {
		p.Activity = r.Activity.State
		if r.Activity.Tool != "" {
			p.Activity += " (" + r.Activity.Tool + ")"
		}
	}
	if r.QueuePosition > 0 {
		p.Extra = map[string]any{"queue_position": r.QueuePosition}
	}
	return p
}

// toolError is an engine error as a tool error: seed 000's name, then its
// message ("ProcessNotFound: Process 'x' not found").
func toolError(err error) error {
	var se *supervisor.Error
	if errors.As(err, &se) {
		return fmt.Errorf("%s: %s", se.Kind.Error(), se.Message)
	}
	var ae *api.Error
	if errors.As(err, &ae) {
		return fmt.Errorf("%s: %s", ae.Name, ae.Message)
	}
	if errors.Is(err, api.ErrUnreachable) {
		return fmt.Errorf("EngineUnreachable: Shepherd's engine does not answer (%v); start the app or `shepherd serve`", err)
	}
	return err
}

// engine is the engine, or why there is none.
func (s *server) engine() (*api.Client, error) {
	if s.cfg.Engine == nil {
		why := s.cfg.EngineErr
		if why == nil {
			why = errors.New("no engine")
		}
		return nil, fmt.Errorf("EngineUnavailable: Shepherd's engine is not running and could not be started: %v", why)
	}
	return s.cfg.Engine, nil
}

// projectID is the project the tools act in: the calling agent's, else the
// known project whose folder holds the server's working folder (the
// deepest), else that folder, added as a project.
func (s *server) projectID() (*api.Client, string, error) {
	e, err := s.engine()
	if err != nil {
		return nil, "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.project != "" {
		return e, s.project, nil
	}
	ctx := context.Background()
	if s.cfg.Caller.ProjectID != "" {
		if _, err := api.Call(ctx, e, api.GetProject, api.ProjectIn{Project: s.cfg.Caller.ProjectID}); err == nil {
			s.project = s.cfg.Caller.ProjectID
			return e, s.project, nil
		}
	}
	cwd := filepath.Clean(s.cfg.Cwd)
	best := ""
	bestLen := -1
	if ps, err := api.Call(ctx, e, api.ListProjects, api.NoInput{}); err == nil {
		for _, p := range ps.Body {
			if (cwd == p.Path || strings.HasPrefix(cwd, p.Path+string(filepath.Separator))) && len(p.Path) > bestLen {
				best, bestLen = p.ID, len(p.Path)
			}
		}
	}
	if best == "" {
		p, err := api.Call(ctx, e, api.AddProject, api.AddProjectIn{Body: api.ProjectInput{Path: cwd}})
		if err != nil {
			return nil, "", toolError(err)
		}
		best = p.Body.ID
	}
	s.project = best
	return e, best, nil
}

// CreateIn is create_process's input (seed 000's parameters).
type CreateIn struct {
	ID                 string            `json:"id" jsonschema:"a name for the process: letters, digits, '.', '_' or '-', starting with a letter or digit"`
	Command            string            `json:"command" jsonschema:"the program to run, e.g. npm (looked up in PATH) or ./bin/server"`
	Args               []string          `json:"args,omitempty" jsonschema:"its arguments, e.g. [\"run\", \"dev\"]"`
	Env                map[string]string `json:"env,omitempty" jsonschema:"environment variables added to the agent's own"`
	Cwd                string            `json:"cwd,omitempty" jsonschema:"its working folder (default: the project's folder)"`
	AutoStartOnRestore bool              `json:"auto_start_on_restore,omitempty" jsonschema:"start it again when Shepherd starts"`
	KeepAlive          bool              `json:"keep_alive,omitempty" jsonschema:"restart it when it dies (2 s, doubling to 60 s)"`
	Permissions        []string          `json:"permissions,omitempty" jsonschema:"sandbox grants: '@network' and '@write:<absolute folder>'; none means no network and no writes except its log"`
	StopWithParent     *bool             `json:"stop_with_parent,omitempty" jsonschema:"stop it when the agent that created it is removed (default true)"`
}

// IDIn names one process.
type IDIn struct {
	ID string `json:"id" jsonschema:"the process's id"`
}

func (s *server) create(ctx context.Context, _ *mcp.CallToolRequest, in CreateIn) (*mcp.CallToolResult, Process, error) {
	e, pid, err := s.projectID()
	if err != nil {
		return nil, Process{}, err
	}
	spec := supervisor.AgentSpec{ID: in.ID, Command: in.Command, Args: in.Args, Env: in.Env, Cwd: in.Cwd,
		AutoStartOnRestore: in.AutoStartOnRestore, KeepAlive: in.KeepAlive, StopWithParent: in.StopWithParent}
	if spec.Cwd == "" {
		spec.Cwd = s.cfg.Cwd
	}
	applyPermissions(&spec, in.Permissions)
	r, err := api.Call(ctx, e, api.CreateAgent, api.CreateAgentIn{Project: pid, Body: spec})
	if err != nil {
		return nil, Process{}, toolError(err)
	}
	return nil, processOf(r.Body), nil
}

func (s *server) start(ctx context.Context, _ *mcp.CallToolRequest, in IDIn) (*mcp.CallToolResult, Process, error) {
	e, pid, err := s.projectID()
	if err != nil {
		return nil, Process{}, err
	}
	r, err := api.Call(ctx, e, api.StartAgent, api.AgentIn{Project: pid, Agent: in.ID})
	if err != nil {
		return nil, Process{}, toolError(err)
	}
	return nil, processOf(r.Body), nil
}

// StopIn is stop_process's input.
type StopIn struct {
	ID            string `json:"id" jsonschema:"the process's id"`
	GracePeriodMs *int   `json:"grace_period_ms,omitempty" jsonschema:"milliseconds between SIGTERM and SIGKILL (default: its own grace)"`
}

func (s *server) stop(ctx context.Context, _ *mcp.CallToolRequest, in StopIn) (*mcp.CallToolResult, Process, error) {
	e, pid, err := s.projectID()
	if err != nil {
		return nil, Process{}, err
	}
	var stop api.StopInput
	if in.GracePeriodMs != nil {
		if *in.GracePeriodMs < 0 || *in.GracePeriodMs > 3600*1000 {
			return nil, Process{}, fmt.Errorf("ValidationError: grace_period_ms must be between 0 and 3600000, not %d", *in.GracePeriodMs)
		}
		g := *in.GracePeriodMs / 1000 // whole seconds, as the API takes them
		stop.GraceSec = &g
	}
	r, err := api.Call(ctx, e, api.StopAgent, api.StopAgentIn{Project: pid, Agent: in.ID, Body: &stop})
	if err != nil {
		return nil, Process{}, toolError(err)
	}
	return nil, processOf(r.Body), nil
}

// Removed is remove_process's answer.
type Removed struct {
	ID      string `json:"id"`
	Removed bool   `json:"removed"`
	LogPath string `json:"log_path"`
}

func (s *server) remove(ctx context.Context, _ *mcp.CallToolRequest, in IDIn) (*mcp.CallToolResult, Removed, error) {
	e, pid, err := s.projectID()
	if err != nil {
		return nil, Removed{}, err
	}
	r, err := api.Call(ctx, e, api.GetAgent, api.AgentIn{Project: pid, Agent: in.ID})
	if err != nil {
		return nil, Removed{}, toolError(err)
	}
	if _, err := api.Call(ctx, e, api.RemoveAgent, api.RemoveAgentIn{Project: pid, Agent: in.ID, Force: true}); err != nil {
		return nil, Removed{}, toolError(err)
	}
	return nil, Removed{ID: in.ID, Removed: true, LogPath: r.Body.LogPath}, nil
}

// ListIn is list_processes's input.
type ListIn struct {
	All bool `json:"all,omitempty" jsonschema:"every process of the project, not only those you created"`
}

// List is list_processes's answer.
type List struct {
	Project   string    `json:"project"`
	Processes []Process `json:"processes"`
}

func (s *server) list(ctx context.Context, _ *mcp.CallToolRequest, in ListIn) (*mcp.CallToolResult, List, error) {
	e, pid, err := s.projectID()
	if err != nil {
		return nil, List{}, err
	}
	recs, err := api.Call(ctx, e, api.ListAgents, api.ListAgentsIn{Project: pid})
	if err != nil {
		return nil, List{}, toolError(err)
	}
	out := List{Project: pid, Processes: []Process{}}
	mine := s.cfg.Caller.AgentID
	for _, r := range recs.Body {
		if in.All || mine == "" || r.Parent == mine {
			out.Processes = append(out.Processes, processOf(r))
		}
	}
	return nil, out, nil
}

func (s *server) get(ctx context.Context, _ *mcp.CallToolRequest, in IDIn) (*mcp.CallToolResult, Process, error) {
	e, pid, err := s.projectID()
	if err != nil {
		return nil, Process{}, err
	}
	r, err := api.Call(ctx, e, api.GetAgent, api.AgentIn{Project: pid, Agent: in.ID})
	if err != nil {
		return nil, Process{}, toolError(err)
	}
	return nil, processOf(r.Body), nil
}

// ReadLogIn is read_log's input.
type ReadLogIn struct {
	ID   string `json:"id" jsonschema:"the process's id"`
	Tail int    `json:"tail,omitempty" jsonschema:"how many of the last lines (default 100, at most 2000)"`
}

// Log is read_log's answer.
type Log struct {
	ID      string   `json:"id"`
	Lines   []string `json:"lines"`
	LogPath string   `json:"log_path"`
	Capped  string   `json:"capped,omitempty"` // says so when the tail asked was over the bound
}

func (s *server) readLog(ctx context.Context, _ *mcp.CallToolRequest, in ReadLogIn) (*mcp.CallToolResult, Log, error) {
	e, pid, err := s.projectID()
	if err != nil {
		return nil, Log{}, err
	}
	out := Log{ID: in.ID, Lines: []string{}}
	n := in.Tail
	switch {
	case n < 0:
		return nil, Log{}, fmt.Errorf("ValidationError: tail must be a number of lines ≥ 0, not %d", n)
	case n == 0:
		n = DefaultTail
	case n > MaxTail:
		out.Capped = fmt.Sprintf("tail %d is over the bound: the last %d lines are given; read %s for more", n, MaxTail, "log_path")
		n = MaxTail
	}
	r, err := api.Call(ctx, e, api.GetAgent, api.AgentIn{Project: pid, Agent: in.ID})
	if err != nil {
		return nil, Log{}, toolError(err)
	}
	out.LogPath = r.Body.LogPath
	b, err := api.Call(ctx, e, api.GetLog, api.LogIn{Project: pid, Agent: in.ID, Tail: n})
	if err != nil {
		return nil, Log{}, toolError(err)
	}
	if s := strings.TrimSuffix(string(b.Body), "\n"); s != "" {
		out.Lines = strings.Split(s, "\n")
	}
	return nil, out, nil
}

// WaitIn is wait_for_log's input.
type WaitIn struct {
	ID        string `json:"id" jsonschema:"the process's id"`
	Pattern   string `json:"pattern" jsonschema:"a regular expression (Go syntax) a log line must match, e.g. ready on :\\d+"`
	TimeoutMs int    `json:"timeout_ms,omitempty" jsonschema:"how long to wait at most (default 30000, at most 600000)"`
}

// Waited is wait_for_log's answer.
type Waited struct {
	Matched  bool   `json:"matched"`
	Line     string `json:"line,omitempty"`
	WaitedMs int64  `json:"waited_ms"`
	Status   string `json:"status"`
	Reason   string `json:"reason,omitempty"` // why it did not match: the time ran out, the process ended
}

func (s *server) waitForLog(ctx context.Context, _ *mcp.CallToolRequest, in WaitIn) (*mcp.CallToolResult, Waited, error) {
	e, pid, err := s.projectID()
	if err != nil {
		return nil, Waited{}, err
	}
	re, err := regexp.Compile(in.Pattern)
	if err != nil {
		return nil, Waited{}, fmt.Errorf("ValidationError: pattern %q is not a valid regular expression: %v", in.Pattern, err)
	}
	wait := defaultWait
	switch {
	case in.TimeoutMs < 0 || time.Duration(in.TimeoutMs)*time.Millisecond > MaxWait:
		return nil, Waited{}, fmt.Errorf("ValidationError: timeout_ms must be between 0 and %d, not %d", MaxWait.Milliseconds(), in.TimeoutMs)
	case in.TimeoutMs > 0:
		wait = time.Duration(in.TimeoutMs) * time.Millisecond
	}
	start := time.Now()
	// Lines already there (the last 200), then what is written from now on.
	tail, err := api.Call(ctx, e, api.GetLog, api.LogIn{Project: pid, Agent: in.ID, Tail: 200})
	if err != nil {
		return nil, Waited{}, toolError(err)
	}
	for _, l := range strings.Split(string(tail.Body), "\n") {
		if re.MatchString(l) {
			return nil, Waited{Matched: true, Line: l, Status: statusOf(e, pid, in.ID)}, nil
		}
	}
	off := tail.Offset
	partial := ""
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(waitPollPeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, Waited{}, ctx.Err()
		case <-deadline.C:
			return nil, Waited{WaitedMs: time.Since(start).Milliseconds(), Status: statusOf(e, pid, in.ID),
				Reason: fmt.Sprintf("no line matched within %s", wait)}, nil
		case <-tick.C:
		}
		more, err := api.Call(ctx, e, api.GetLog, api.LogIn{Project: pid, Agent: in.ID, Since: api.Some(off)})
		if err != nil {
			return nil, Waited{}, toolError(err)
		}
		off = more.Offset
		text := partial + string(more.Body)
		lines := strings.Split(text, "\n")
		partial = lines[len(lines)-1]
		for _, l := range lines[:len(lines)-1] {
			if re.MatchString(l) {
				return nil, Waited{Matched: true, Line: l, WaitedMs: time.Since(start).Milliseconds(), Status: statusOf(e, pid, in.ID)}, nil
			}
		}
		st := statusOf(e, pid, in.ID)
		if st != "" && st != "running" && st != "spawning" && st != "queued" {
			if partial != "" && re.MatchString(partial) {
				return nil, Waited{Matched: true, Line: partial, WaitedMs: time.Since(start).Milliseconds(), Status: st}, nil
			}
			return nil, Waited{WaitedMs: time.Since(start).Milliseconds(), Status: st,
				Reason: "the process ended (" + st + ") before a line matched"}, nil
		}
	}
}

func statusOf(e *api.Client, pid, id string) string {
	r, err := api.Call(context.Background(), e, api.GetAgent, api.AgentIn{Project: pid, Agent: id})
	if err != nil {
		return ""
	}
	return string(r.Body.Status)
}
