package mcpserver

import (
	"shepherd/backend/supervisor"
)

// applyPermissions puts the sandbox on the spec: what is created through
// MCP is always sandboxed (no permissions: no network, no writes but its
// log). Whose behalf it is created on, and so what may be granted, the
// engine decides from the credential the server calls with: an agent's own
// (then at most its grants, and the process is its), or the user's.
func applyPermissions(spec *supervisor.AgentSpec, perms []string) {
	p := append([]string{}, perms...)
	spec.Permissions = &p
}
