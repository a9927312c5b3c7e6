package supervisor

import (
	"os"
	"strings"
)

// LookPath is where a start would find command — in the engine's PATH, or
// relative to cwd for a name with a slash — for a form that warns about a
// command that is not there (it does not refuse it: the agent's own PATH
// may differ). A command that is not found is a ValidationError.
func (e *Engine) LookPath(command, cwd string) (string, error) {
	if strings.TrimSpace(command) == "" {
		return "", newErr(ErrValidation, "the command is empty")
	}
	p, err := resolveCommand(command, cwd, os.Environ())
	if err != nil {
		return "", newErr(ErrValidation, "%v", err)
	}
	return p, nil
}
