package mcpserver_test

import (
	"os"
	"path/filepath"
	"testing"

	"shepherd/backend/mcpserver"
	"shepherd/backend/supervisor"
)

// What an agent creates through MCP runs sandboxed by default — for real:
// its write in the project folder fails — and a grant lets it write.
func TestSandboxedByDefault(t *testing.T) {
	en := start(t, mcpserver.Caller{})
	target := filepath.Join(en.cwd, "x")
	script := `touch ` + target + ` 2>/dev/null; echo "rc=$?"`
	p := en.ok("create_process", map[string]any{"id": "plain", "command": "/bin/sh", "args": []string{"-c", script}})
	if p["sandbox"] != "no network, no writes but its log" {
		t.Fatalf("create without permissions: %v", p)
	}
	en.ok("start_process", map[string]any{"id": "plain"})
	if w := en.ok("wait_for_log", map[string]any{"id": "plain", "pattern": `rc=\d`, "timeout_ms": 5000}); w["line"] != "rc=1" {
		t.Fatalf("the default sandbox let it write: %v", w)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatal("written")
	}
	g := en.ok("create_process", map[string]any{"id": "writer", "command": "/bin/sh", "args": []string{"-c", script},
		"permissions": []string{"@write:" + en.cwd}})
	if g["sandbox"] != "no network, writes in "+en.cwd {
		t.Fatalf("create with a grant: %v", g)
	}
	en.ok("start_process", map[string]any{"id": "writer"})
	if w := en.ok("wait_for_log", map[string]any{"id": "writer", "pattern": `rc=\d`, "timeout_ms": 5000}); w["line"] != "rc=0" {
		t.Fatalf("the grant did not let it write: %v", w)
	}
	en.fails("create_process", map[string]any{"id": "bad", "command": "true", "permissions": []string{"@everything"}},
		`ValidationError: agent 'bad': invalid permission "@everything": unknown tag`)
}

// A calling agent grants at most what it holds.
func TestCallerPermissions(t *testing.T) {
	en := start(t, mcpserver.Caller{AgentID: "claude-1"})
	pid := en.remote.ProjectViews()[0].ID
	// claude-1 is unsandboxed: it holds the network and writes in its cwd.
	if _, err := en.host.Engine.CreateAgent(pid, supervisor.AgentSpec{ID: "claude-1", Command: "sleep", Args: []string{"300"}, Cwd: en.cwd}); err != nil {
		t.Fatal(err)
	}
	en.ok("create_process", map[string]any{"id": "ok", "command": "true", "permissions": []string{"@network", "@write:" + en.cwd}})
	en.fails("create_process", map[string]any{"id": "far", "command": "true", "permissions": []string{"@write:/"}},
		"PermissionDenied: agent 'far': permission denied: agent 'claude-1' cannot grant @write:/")
	if _, err := en.remote.GetAgent(pid, "far"); err == nil {
		t.Fatal("a refused process was created")
	}

	// A sandboxed caller with no grants can grant nothing.
	en2 := start(t, mcpserver.Caller{AgentID: "boxed"})
	pid2 := en2.remote.ProjectViews()[0].ID
	none := []string{}
	if _, err := en2.host.Engine.CreateAgent(pid2, supervisor.AgentSpec{ID: "boxed", Command: "true", Permissions: &none}); err != nil {
		t.Fatal(err)
	}
	en2.fails("create_process", map[string]any{"id": "net", "command": "true", "permissions": []string{"@network"}},
		"PermissionDenied: agent 'net': permission denied: agent 'boxed' cannot grant @network")
	en2.ok("create_process", map[string]any{"id": "quiet", "command": "true"})
}
