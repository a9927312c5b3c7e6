package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"shepherd/backend/store"
)

// ConfigFile is Claude Code's project-scoped MCP configuration.
const ConfigFile = ".mcp.json"

// ServerEntry is one server of a .mcp.json (Claude Code's shape: a stdio
// server is a command with its args and env).
type ServerEntry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

// Entry is Shepherd's entry: this executable, `mcp`.
func Entry(exe string) ServerEntry {
	return ServerEntry{Type: "stdio", Command: exe, Args: []string{"mcp"}}
}

// ClaudeCommand is the `claude mcp add` line that does what Install does.
func ClaudeCommand(exe string) string {
	q := exe
	if strings.ContainsAny(q, " \t'\"$\\") {
		q = "'" + strings.ReplaceAll(q, "'", `'\''`) + "'"
	}
	return "claude mcp add --scope project shepherd -- " + q + " mcp"
}

// Install adds (or replaces) the "shepherd" server in dir/.mcp.json,
// keeping every other server and field of the file. It returns the file's
// path.
func Install(dir, exe string) (string, error) {
	path := filepath.Join(dir, ConfigFile)
	doc := map[string]any{}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", err
	default:
		if err := json.Unmarshal(b, &doc); err != nil {
			return "", fmt.Errorf("%s is not valid JSON (%v): fix it, or add Shepherd with: %s", path, err, ClaudeCommand(exe))
		}
	}
	servers, _ := doc["mcpServers"].(map[string]any)
	if servers == nil {
		if _, ok := doc["mcpServers"]; ok {
			return "", fmt.Errorf("%s: \"mcpServers\" is not an object: fix it, or add Shepherd with: %s", path, ClaudeCommand(exe))
		}
		servers = map[string]any{}
	}
	servers["shepherd"] = Entry(exe)
	doc["mcpServers"] = servers
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return "", err
	}
	// The project's own file, shared with its team: readable like the rest
	// of the repository.
	return path, store.WriteFile(path, append(out, '\n'), 0o644)
}
