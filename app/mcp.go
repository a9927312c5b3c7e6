package app

import (
	"encoding/json"
	"os"
	"path/filepath"

	"shepherd/backend/mcpserver"
)

// MCPConfig is the --mcp-config value that gives a Claude Code agent
// Shepherd's MCP server (the Claude preset's "Shepherd tools" checkbox):
// this executable, `mcp`.
func (a *App) MCPConfig() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"shepherd": mcpserver.Entry(exe)}})
	return string(b), err
}
