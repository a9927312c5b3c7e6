package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shepherd/backend/supervisor"
	"shepherd/internal/testutil"
)

func isolate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, v := range []string{"XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"} {
		t.Setenv(v, filepath.Join(dir, strings.ToLower(v)))
	}
	return dir
}

func TestVersion(t *testing.T) {
	if got := New("1.2.3").Version(); got != "1.2.3" {
		t.Fatalf("Version() = %q, want %q", got, "1.2.3")
	}
}

// The window embeds the same engine and API as `shepherd serve`: start-up
// starts it and writes engine.json. A second window on the same data folder
// attaches to that engine through its API and events instead of failing;
// when the engine goes away it says so, and can start one of its own.
func TestStartupEmbedsOrAttaches(t *testing.T) {
	dir := isolate(t)
	needShim(t)
	a := New("test")
	a.emitFn = (&emitted{}).emit
	ctx := context.WithValue(context.Background(), struct{}{}, "wails")
	OnStartup(a)(ctx)
	if a.wailsContext() != ctx {
		t.Fatal("startup did not keep the context")
	}
	st, err := a.Engine()
	if err != nil || st.State != EngineEmbedded || !strings.HasPrefix(st.URL, "http://127.0.0.1:") || st.PID != os.Getpid() {
		t.Fatalf("Engine() = %+v, %v", st, err)
	}
	engineFile := filepath.Join(dir, "xdg_runtime_dir", "shepherd", "engine.json")
	if _, err := os.Stat(engineFile); err != nil {
		t.Fatalf("engine.json: %v", err)
	}
	p, err := a.Projects.Add(t.TempDir(), "shared")
	if err != nil {
		t.Fatal(err)
	}

	// A second window attaches to the first one's engine.
	b := New("test")
	brec := &emitted{}
	b.emitFn = brec.emit
	OnStartup(b)(ctx)
	bst, err := b.Engine()
	if err != nil || bst.State != EngineAttached || bst.URL != st.URL {
		t.Fatalf("second window: %+v, %v", bst, err)
	}
	list, err := b.Projects.List()
	if err != nil || len(list) != 1 || list[0].ID != p.ID {
		t.Fatalf("projects through the attached engine: %+v %v", list, err)
	}
	if _, err := b.Agents.Create(p.ID, supervisor.AgentSpec{ID: "x", Command: "sh", Args: []string{"-c", "exec sleep 30"}, GraceSec: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Agents.Start(p.ID, "x"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the attached window got the engine's events", func() bool { return brec.count("agent:state") >= 2 })
	if _, err := a.Agents.Get(p.ID, "x"); err != nil {
		t.Fatalf("the first window does not see the agent: %v", err)
	}
	_, err = b.Agents.Start(p.ID, "x")
	if !errors.Is(err, supervisor.ErrAlreadyRunning) {
		t.Fatalf("an engine error through the API: %v", err)
	}
	if _, err := b.Agents.Stop(p.ID, "x", 1); err != nil {
		t.Fatal(err)
	}

	// The engine goes away: the attached window says so, then starts its own.
	OnShutdown(a)(ctx)
	if _, err := os.Stat(engineFile); !os.IsNotExist(err) {
		t.Fatalf("engine.json left after shutdown: %v", err)
	}
	testutil.Eventually(t, "the attached window noticed", func() bool { s, _ := b.Engine(); return s.State == EngineLost })
	if _, err := b.Projects.List(); err == nil {
		t.Fatal("a lost engine still answers")
	}
	if st, err := b.StartEngine(); err != nil || st.State != EngineEmbedded {
		t.Fatalf("StartEngine: %+v %v", st, err)
	}
	if list, _ := b.Projects.List(); len(list) != 1 {
		t.Fatalf("projects in the new engine: %+v", list)
	}
	OnShutdown(b)(ctx)
	if _, err := a.Engine(); err == nil {
		t.Fatal("Engine() after shutdown reports a running engine")
	}
}

// A second launch focuses the window: not before there is one (the Wails
// runtime cannot be called without its context), and at once after.
func TestFocusBeforeStartupIsSafe(t *testing.T) {
	a := New("test")
	focused := 0
	a.focusFn = func(context.Context) { focused++ }
	Focus(a)
	if focused != 0 {
		t.Fatal("focused a window that is not there yet")
	}
	a.mu.Lock()
	a.ctx = context.Background()
	a.mu.Unlock()
	Focus(a)
	if focused != 1 {
		t.Fatalf("focused %d times once the window is up, want 1", focused)
	}
}

// The Claude preset's checkbox gives the agent Shepherd's MCP server: a
// --mcp-config value naming this executable and `mcp`.
func TestMCPConfig(t *testing.T) {
	s, err := New("test").MCPConfig()
	if err != nil || !strings.Contains(s, `"shepherd":{"type":"stdio","command":"/`) || !strings.Contains(s, `"args":["mcp"]`) {
		t.Fatalf("%s %v", s, err)
	}
}
