// Package presets are the agent CLIs Shepherd knows how to run, read and
// resume: the command, the profile its log is read with, its resume
// arguments, and where a prompt and a model go. The window's presets and
// `shepherd create --preset` are these.
package presets

import (
	"fmt"
	"strings"

	"shepherd/backend/workspace"
)

// Preset is one agent CLI.
type Preset struct {
	Name    string `json:"name"`    // claude, codex
	Title   string `json:"title"`   // Claude Code, Codex
	Command string `json:"command"` // the executable
	Profile string `json:"profile"` // how its log is read
	Install string `json:"install"` // how to install it when it is not on PATH
	// DefaultPrompt is what a resume says when no prompt is given.
	DefaultPrompt string `json:"defaultPrompt"`
}

// Claude is Claude Code in print mode with stream-json output (SPEC
// "Profiles").
var Claude = Preset{Name: "claude", Title: "Claude Code", Command: "claude", Profile: "claude-stream-json",
	Install: "npm install -g @anthropic-ai/claude-code", DefaultPrompt: "continue"}

// Codex is OpenAI's Codex CLI in exec mode with JSON events (SPEC
// "Profiles").
var Codex = Preset{Name: "codex", Title: "Codex", Command: "codex", Profile: "codex-json",
	Install: "npm install -g @openai/codex", DefaultPrompt: "continue"}

// All lists the presets.
var All = []Preset{Claude, Codex}

// Names lists the presets' names.
func Names() []string {
	out := make([]string, len(All))
	for i, p := range All {
		out[i] = p.Name
	}
	return out
}

// Lookup finds a preset by name; an unknown one is an error listing them.
func Lookup(name string) (Preset, error) {
	for _, p := range All {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
	}
	return Preset{}, fmt.Errorf("unknown preset %q (presets: %s)", name, strings.Join(Names(), ", "))
}

// Args are the preset's arguments for a run with prompt, model (optional)
// and extra options of the user's (placed before the prompt), and the
// resume arguments with the same options ({sessionId} filled in by the
// engine).
func (p Preset) Args(prompt, model string, extra []string) (args, resume []string) {
	switch p.Name {
	case Claude.Name:
		base := []string{"-p", "--verbose", "--output-format", "stream-json"}
		if model != "" {
			base = append(base, "--model", model)
		}
		base = append(base, extra...)
		args = append(append(append([]string{}, base...), "--"), prompt)
		resume = append(append(append([]string{}, base...), "--resume", "{sessionId}", "--"), p.DefaultPrompt)
	case Codex.Name:
		opts := []string{}
		if model != "" {
			opts = append(opts, "-m", model)
		}
		opts = append(opts, extra...)
		// codex exec --json [options] <prompt>;
		// codex exec --json [options] resume <session> <prompt>.
		args = append(append([]string{"exec", "--json"}, opts...), prompt)
		resume = append(append([]string{"exec", "--json"}, opts...), "resume", "{sessionId}", p.DefaultPrompt)
	}
	return args, resume
}

// WorktreeByDefault reports whether an agent made from a preset runs in a
// git worktree of its own unless told otherwise: when its project folder is
// in a git repository with a commit to start from.
func WorktreeByDefault(projectPath string) bool { return workspace.IsRepo(projectPath) }
