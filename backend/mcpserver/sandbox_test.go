package mcpserver_test

import (
	"os"
	"path/filepath"
	"testing"

	"shepherd/backend/supervisor"
)

// What an agent creates through MCP runs sandboxed by default — for real:
// its write in the project folder fails — and a grant lets it write.
func TestSandboxedByDefault(t *testing.T) {
	en := start(t)
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
	en := start(t)
	// claude-1 is unsandboxed: it holds the network and writes in its cwd.
	pid := en.becomeAgent(supervisor.AgentSpec{ID: "claude-1", Command: "sleep", Args: []string{"300"}})
	en.ok("create_process", map[string]any{"id": "ok", "command": "true", "permissions": []string{"@network", "@write:" + en.cwd}})
	en.fails("create_process", map[string]any{"id": "far", "command": "true", "permissions": []string{"@write:/"}},
		"PermissionDenied: agent 'far': permission denied: agent 'claude-1' cannot grant @write:/")
	if _, err := en.host.Engine.GetAgent(pid, "far"); err == nil {
		t.Fatal("a refused process was created")
	}

	// A sandboxed caller with no grants can grant nothing.
	en2 := start(t)
	none := []string{}
	en2.becomeAgent(supervisor.AgentSpec{ID: "boxed", Command: "sleep", Args: []string{"300"}, Permissions: &none})
	en2.fails("create_process", map[string]any{"id": "net", "command": "true", "permissions": []string{"@network"}},
		"PermissionDenied: agent 'net': permission denied: agent 'boxed' cannot grant @network")
	en2.ok("create_process", map[string]any{"id": "quiet", "command": "true"})
}
