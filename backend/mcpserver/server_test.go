package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"shepherd/backend/api"
	"shepherd/backend/cli"
	"shepherd/backend/mcpserver"
	"shepherd/backend/paths"
	"shepherd/backend/procid"
	"shepherd/backend/shim"
	"shepherd/backend/supervisor"
	"shepherd/internal/testutil"
)

var shimPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "shepherd-mcp-test-")
	if err != nil {
		panic(err)
	}
	shimPath = filepath.Join(dir, "shepherd-shim")
	if out, err := shim.BuildCommand(shimPath).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build shim: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type env struct {
	t      testing.TB
	host   *cli.Host
	remote *api.Client
	cwd    string
	cs     *mcp.ClientSession
}

// start runs a real engine (with its API) and an MCP server on it, and
// connects an MCP client to the server in memory.
func start(t testing.TB) *env {
	t.Helper()
	root := t.TempDir()
	p := paths.Paths{Data: filepath.Join(root, "data"), State: filepath.Join(root, "state"), Runtime: filepath.Join(root, "run")}
	l := zerolog.Nop()
	h, err := cli.Start(context.Background(), cli.ServeOptions{Paths: &p, ShimPath: shimPath, Logger: &l})
	if err != nil {
		t.Fatal(err)
	}
	en := &env{t: t, host: h, remote: api.NewClient(h.Info), cwd: filepath.Join(root, "project")}
	if err := os.MkdirAll(en.cwd, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var shims []int
		for _, r := range h.Engine.AllAgents() {
			if r.PID > 0 && procid.Compare(r.PID, r.ProcessStartTime) == procid.Same {
				_ = procid.SignalGroup(r.PID, 9)
			}
			if r.ShimPID > 0 {
				shims = append(shims, r.ShimPID)
			}
		}
		h.Close()
		// The shims write exit.json after the kill: let them finish before
		// the test's folders are removed.
		testutil.WaitGone(shims...)
	})
	en.cs = en.connect(mcpserver.Config{Engine: en.remote, Cwd: en.cwd, Version: "test"})
	return en
}

// becomeAgent creates and starts the agent spec in the project of the
// server's folder and reconnects the MCP server as `shepherd mcp` runs
// inside that agent: with the credential the engine gave its run (read
// from the agent's environment, as its own processes see it) and the
// identity the engine answers for it.
func (en *env) becomeAgent(spec supervisor.AgentSpec) string {
	en.t.Helper()
	pr, _, err := en.host.Engine.AddProject(en.cwd, "")
	if err != nil {
		en.t.Fatal(err)
	}
	if spec.Cwd == "" {
		spec.Cwd = en.cwd
	}
	if _, err := en.host.Engine.CreateAgent(pr.ID, spec); err != nil {
		en.t.Fatal(err)
	}
	rec, err := en.host.Engine.StartAgent(context.Background(), pr.ID, spec.ID)
	if err != nil {
		en.t.Fatal(err)
	}
	tok := agentToken(en.t, rec.PID)
	r := api.NewClient(api.EngineInfo{URL: en.host.Info.URL, Token: tok})
	w, err := api.Call(context.Background(), r, api.GetWhoami, api.NoInput{})
	if err != nil || w.Body.User || w.Body.AgentID != spec.ID || w.Body.ProjectID != pr.ID {
		en.t.Fatalf("whoami with %s's credential: %+v %v", spec.ID, w, err)
	}
	who := w.Body
	en.cs = en.connect(mcpserver.Config{Engine: r, Cwd: en.cwd, Caller: mcpserver.Caller{ProjectID: who.ProjectID, AgentID: who.AgentID}, Version: "test"})
	return pr.ID
}

// agentToken reads the credential from the environment of the agent's
// process (or of one of its children).
func agentToken(t testing.TB, pid int) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		pids := []int{pid}
		files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
		for _, cf := range files {
			b, _ := os.ReadFile(cf)
			for _, f := range strings.Fields(string(b)) {
				var c int
				fmt.Sscan(f, &c)
				pids = append(pids, c)
			}
		}
		for _, p := range pids {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p))
			for _, kv := range strings.Split(string(b), "\x00") {
				if v, ok := strings.CutPrefix(kv, supervisor.EnvAgentToken+"="); ok {
					return v
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s in the environment of agent pid %d", supervisor.EnvAgentToken, pid)
	return ""
}

func (en *env) connect(cfg mcpserver.Config) *mcp.ClientSession {
	en.t.Helper()
	srv := mcpserver.New(cfg)
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		en.t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		en.t.Fatal(err)
	}
	en.t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and returns its structured answer, or its error text.
func (en *env) call(name string, args map[string]any) (map[string]any, string) {
	en.t.Helper()
	res, err := en.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, "protocol error: " + err.Error()
	}
	if res.IsError {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return nil, b.String()
	}
	var out map[string]any
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil {
		en.t.Fatalf("%s: structured content %s: %v", name, raw, err)
	}
	return out, ""
}

func (en *env) ok(name string, args map[string]any) map[string]any {
	en.t.Helper()
	out, errText := en.call(name, args)
	if errText != "" {
		en.t.Fatalf("%s %v: %s", name, args, errText)
	}
	return out
}

func (en *env) fails(name string, args map[string]any, want string) {
	en.t.Helper()
	_, errText := en.call(name, args)
	if !strings.Contains(errText, want) {
		en.t.Fatalf("%s %v: error %q, want %q", name, args, errText, want)
	}
}

// A dev server's life through the tools: create, start, wait for its
// readiness line, look at it, stop it with a grace, remove it.
func TestDevServerThroughTools(t *testing.T) {
	en := start(t)
	p := en.ok("create_process", map[string]any{"id": "web", "command": "/bin/sh",
		"args": []string{"-c", `echo booting; sleep 0.3; echo "ready on :3000"; trap 'echo bye; exit 0' TERM; while :; do sleep 0.1; done`}})
	if p["status"] != "not_started" {
		t.Fatalf("create: %v", p)
	}
	en.ok("start_process", map[string]any{"id": "web"})
	w := en.ok("wait_for_log", map[string]any{"id": "web", "pattern": `ready on :\d+`, "timeout_ms": 5000})
	if w["matched"] != true || w["line"] != "ready on :3000" {
		t.Fatalf("wait_for_log: %v", w)
	}
	g := en.ok("get_process", map[string]any{"id": "web"})
	logPath, _ := g["log_path"].(string)
	if g["status"] != "running" || !filepath.IsAbs(logPath) || g["pid"] == nil {
		t.Fatalf("get_process: %v", g)
	}
	if _, err := os.Stat(logPath); err != nil {
		t.Fatalf("log_path: %v", err)
	}
	l := en.ok("read_log", map[string]any{"id": "web", "tail": 1})
	if lines := l["lines"].([]any); len(lines) != 1 || lines[0] != "ready on :3000" {
		t.Fatalf("read_log: %v", l)
	}
	s := en.ok("stop_process", map[string]any{"id": "web", "grace_period_ms": 2000})
	if s["status"] != "stopped" {
		t.Fatalf("stop: %v", s)
	}
	if b, _ := os.ReadFile(logPath); !strings.Contains(string(b), "bye") {
		t.Fatal("SIGTERM did not reach the process within its grace")
	}
	list := en.ok("list_processes", nil)
	if ps := list["processes"].([]any); len(ps) != 1 {
		t.Fatalf("list: %v", list)
	}
	r := en.ok("remove_process", map[string]any{"id": "web"})
	if r["removed"] != true {
		t.Fatalf("remove: %v", r)
	}
	en.fails("get_process", map[string]any{"id": "web"}, "ProcessNotFound: Process 'web' not found")
	// The process lives in the project of the server's folder.
	views := en.host.Engine.ProjectViews()
	if len(views) != 1 || views[0].Path != en.cwd {
		t.Fatalf("projects: %+v", views)
	}
}

// Seed 000's errors, as tool errors with its names and messages.
func TestSeedErrors(t *testing.T) {
	en := start(t)
	en.ok("create_process", map[string]any{"id": "a", "command": "/bin/sh", "args": []string{"-c", "sleep 300"}})
	en.fails("create_process", map[string]any{"id": "a", "command": "true"}, "ProcessAlreadyExists: Process 'a' already exists")
	en.fails("start_process", map[string]any{"id": "nope"}, "ProcessNotFound: Process 'nope' not found")
	en.fails("stop_process", map[string]any{"id": "a"}, "ProcessNotRunning: Process 'a' is not running")
	en.ok("start_process", map[string]any{"id": "a"})
	en.fails("start_process", map[string]any{"id": "a"}, "ProcessAlreadyRunning: Process 'a' is already running")
	en.ok("create_process", map[string]any{"id": "ghost", "command": "/no/such/program"})
	en.fails("start_process", map[string]any{"id": "ghost"}, "ProcessStartFailed: Failed to start process 'ghost'")
	en.fails("remove_process", map[string]any{"id": "nope"}, "ProcessNotFound")
}

// TC-001..TC-004 of seed 000, through MCP.
func TestSeedCases(t *testing.T) {
	en := start(t)
	// TC-001: create → not_started, start → running, stop → stopped.
	if p := en.ok("create_process", map[string]any{"id": "tc1", "command": "sleep", "args": []string{"300"}}); p["status"] != "not_started" {
		t.Fatalf("TC-001 create: %v", p)
	}
	if p := en.ok("start_process", map[string]any{"id": "tc1"}); p["status"] != "running" {
		t.Fatalf("TC-001 start: %v", p)
	}
	if p := en.ok("stop_process", map[string]any{"id": "tc1"}); p["status"] != "stopped" {
		t.Fatalf("TC-001 stop: %v", p)
	}
	// TC-002: a command that fails at once → failed, exit code ≠ 0, an error.
	en.ok("create_process", map[string]any{"id": "tc2", "command": "/bin/sh", "args": []string{"-c", "exit 7"}})
	en.ok("start_process", map[string]any{"id": "tc2"})
	var g map[string]any
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if g = en.ok("get_process", map[string]any{"id": "tc2"}); g["status"] == "failed" {
			break
		}
	}
	if g["status"] != "failed" || g["exit_code"] != float64(7) || !strings.Contains(fmt.Sprint(g["error"]), "code 7") {
		t.Fatalf("TC-002: %v", g)
	}
	// TC-003: stop of a not-started process → ProcessNotRunning.
	en.ok("create_process", map[string]any{"id": "tc3", "command": "true"})
	en.fails("stop_process", map[string]any{"id": "tc3"}, "ProcessNotRunning")
	// TC-004: two starts at once: one succeeds, the other is ProcessAlreadyRunning.
	en.ok("create_process", map[string]any{"id": "tc4", "command": "sleep", "args": []string{"300"}})
	var wg sync.WaitGroup
	errs := make([]string, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = en.call("start_process", map[string]any{"id": "tc4"})
		}()
	}
	wg.Wait()
	okN, already := 0, 0
	for _, e := range errs {
		switch {
		case e == "":
			okN++
		case strings.Contains(e, "ProcessAlreadyRunning"):
			already++
		}
	}
	if okN != 1 || already != 1 {
		t.Fatalf("TC-004: %q", errs)
	}
}

// Bad input: each names what was wrong; nothing is created.
func TestBadInput(t *testing.T) {
	en := start(t)
	en.fails("create_process", map[string]any{"id": "a", "command": "true", "colour": "red"}, "colour")
	en.fails("create_process", map[string]any{"id": "a", "command": 5}, "command")
	en.fails("create_process", map[string]any{"command": "true"}, "id")
	en.fails("create_process", map[string]any{"id": "../etc", "command": "true"}, "is not a safe file name")
	en.fails("stop_process", map[string]any{"id": "a", "grace_period_ms": -5}, "grace_period_ms")
	en.fails("wait_for_log", map[string]any{"id": "a", "pattern": "("}, "not a valid regular expression")
	en.fails("read_log", map[string]any{"id": "a", "tail": -1}, "tail")
	if l := en.ok("list_processes", map[string]any{"all": true}); len(l["processes"].([]any)) != 0 {
		t.Fatalf("something was created: %v", l)
	}
	en.ok("create_process", map[string]any{"id": "big", "command": "/bin/sh", "args": []string{"-c", "seq 1 5000"}})
	en.ok("start_process", map[string]any{"id": "big"})
	en.ok("wait_for_log", map[string]any{"id": "big", "pattern": "^5000$"})
	l := en.ok("read_log", map[string]any{"id": "big", "tail": 100000})
	if n := len(l["lines"].([]any)); n != mcpserver.MaxTail || !strings.Contains(fmt.Sprint(l["capped"]), "over the bound") {
		t.Fatalf("read_log over the bound: %d lines, capped %v", n, l["capped"])
	}
	// An engine that is not there: a clear tool error, not a hang.
	cs := en.connect(mcpserver.Config{EngineErr: fmt.Errorf("the data folder is read-only"), Cwd: en.cwd})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_processes", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(fmt.Sprint(res.Content[0].(*mcp.TextContent).Text), "could not be started: the data folder is read-only") {
		t.Fatalf("without an engine: %v %+v", err, res)
	}
}

// Processes an agent creates are marked with it, listed as its own, and
// stopped when it is removed.
func TestParentAgent(t *testing.T) {
	en := start(t)
	pid := en.becomeAgent(supervisorSpec("claude-1"))
	en.ok("create_process", map[string]any{"id": "dev", "command": "sleep", "args": []string{"300"}})
	en.ok("create_process", map[string]any{"id": "keep", "command": "sleep", "args": []string{"300"}, "stop_with_parent": false})
	en.ok("start_process", map[string]any{"id": "dev"})
	en.ok("start_process", map[string]any{"id": "keep"})
	if _, err := en.host.Engine.CreateAgent(pid, supervisorSpec("other")); err != nil {
		t.Fatal(err)
	}
	mine := en.ok("list_processes", nil)["processes"].([]any)
	if len(mine) != 2 || mine[0].(map[string]any)["parent"] != "claude-1" {
		t.Fatalf("list of mine: %v", mine)
	}
	// All it may see: itself and its own, never the user's other agent.
	if all := en.ok("list_processes", map[string]any{"all": true})["processes"].([]any); len(all) != 3 {
		t.Fatalf("list of all: %d", len(all))
	}
	if err := en.host.Engine.RemoveAgent(context.Background(), pid, "claude-1", true, false); err != nil {
		t.Fatal(err)
	}
	if r, _ := en.host.Engine.GetAgent(pid, "dev"); r.Status != "stopped" {
		t.Fatalf("child after its parent's removal: %s", r.Status)
	}
	if r, _ := en.host.Engine.GetAgent(pid, "keep"); r.Status != "running" {
		t.Fatalf("stop_with_parent=false child: %s", r.Status)
	}
}

// shepherd mcp install writes a .mcp.json Claude Code reads, keeping what
// is there.
func TestInstall(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, mcpserver.ConfigFile), []byte(`{"mcpServers":{"other":{"command":"x","args":[]}},"extra":1}`), 0o644)
	path, err := mcpserver.Install(dir, "/opt/shepherd/shepherd")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	var doc struct {
		MCPServers map[string]mcpserver.ServerEntry `json:"mcpServers"`
		Extra      int                              `json:"extra"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.MCPServers["shepherd"]
	if s.Type != "stdio" || s.Command != "/opt/shepherd/shepherd" || len(s.Args) != 1 || s.Args[0] != "mcp" ||
		doc.MCPServers["other"].Command != "x" || doc.Extra != 1 {
		t.Fatalf(".mcp.json:\n%s", b)
	}
	os.WriteFile(path, []byte("{nope"), 0o644)
	if _, err := mcpserver.Install(dir, "/x"); err == nil || !strings.Contains(err.Error(), "claude mcp add --scope project shepherd -- /x mcp") {
		t.Fatalf("bad file: %v", err)
	}
}

func supervisorSpec(id string) supervisor.AgentSpec {
	return supervisor.AgentSpec{ID: id, Command: "sleep", Args: []string{"300"}}
}

// Tools are called at once by some clients: resolving the project is safe.
func TestConcurrentCalls(t *testing.T) {
	en := start(t)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			en.ok("create_process", map[string]any{"id": fmt.Sprintf("p%d", i), "command": "true"})
		}()
	}
	wg.Wait()
	if n := len(en.ok("list_processes", map[string]any{"all": true})["processes"].([]any)); n != 8 {
		t.Fatalf("%d processes", n)
	}
	if len(en.host.Engine.ProjectViews()) != 1 {
		t.Fatal("the project was added more than once")
	}
}
