package presets

import (
	"os"
	"path/filepath"
)

// SandboxNeeds is what an agent CLI needs of its own, sandboxed: the folder
// it keeps its state in (sessions, settings, credentials: without it it
// cannot start, remember or resume), which its preset grants writable, and
// the environment that makes it keep all its state there. Claude Code keeps
// a config file in the home folder (~/.claude.json) besides ~/.claude;
// CLAUDE_CONFIG_DIR moves that file into the folder, so that the home
// folder itself stays read-only. env is the agent's own environment (its
// CLAUDE_CONFIG_DIR or CODEX_HOME win). No needs for other profiles.
func SandboxNeeds(profile string, env map[string]string) (dir string, add map[string]string) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", nil
	}
	switch profile {
	case Claude.Profile:
		if d := env["CLAUDE_CONFIG_DIR"]; d != "" {
			return d, nil
		}
		d := filepath.Join(home, ".claude")
		return d, map[string]string{"CLAUDE_CONFIG_DIR": d}
	case Codex.Profile:
		if d := env["CODEX_HOME"]; d != "" {
			return d, nil
		}
		return filepath.Join(home, ".codex"), nil
	}
	return "", nil
}
