package supervisor

import (
	"slices"
	"testing"

	"shepherd/backend/store"
)

// The permission tool is an MCP server over HTTP: a run gets it from an
// engine on TCP, never a unix:// address it could not reach (a host's
// engine), and never over args that decide permissions their own way.
func TestPermissionToolOnlyOverTCP(t *testing.T) {
	rec := &store.Record{Profile: store.ProfileClaudeJSON}
	args := []string{"-p", "--verbose", "--output-format", "stream-json", "--", "go"}
	if got := withPermissionTool(rec, args, "http://127.0.0.1:4242"); !slices.Contains(got, "--mcp-config") ||
		!slices.Contains(got, "--permission-prompt-tool") || got[len(got)-2] != "--" {
		t.Fatalf("over TCP: %q", got)
	}
	if got := withPermissionTool(rec, args, "unix:///run/user/1000/shepherd/engine.sock"); !slices.Equal(got, args) {
		t.Fatalf("over a Unix socket: %q", got)
	}
	if got := withPermissionTool(rec, args, ""); !slices.Equal(got, args) {
		t.Fatalf("no API: %q", got)
	}
}
