package loganalysis

import (
	"fmt"
	"regexp"
)

// sessionPattern is what Claude Code's session ids and Codex's thread ids
// are: UUIDs ("3f2a9c4e-8b1d-4e6f-a2c7-5d9e0f1b3a71"; Codex's are version 7).
var sessionPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// CheckSessionID refuses a session id read from an agent's log that is not
// one its CLI gives: the log is the agent's to write, and the id goes into
// the command line of its resume (--resume {sessionId}), where anything
// else — an option, a second argument, a path — must never be passed on.
func CheckSessionID(id string) error {
	if !sessionPattern.MatchString(id) {
		return fmt.Errorf("session id %q is not one Claude Code or Codex gives (a UUID such as 3f2a9c4e-8b1d-4e6f-a2c7-5d9e0f1b3a71)", truncate(id, 80))
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
