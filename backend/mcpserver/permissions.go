package mcpserver

import (
	"shepherd/backend/supervisor"
)

// applyPermissions puts the sandbox on the spec: what an agent creates
// through MCP is always sandboxed (no permissions: no network, no writes but
// its log), and on the calling agent's behalf, so the engine refuses a grant
// beyond the caller's own (PermissionDenied). Without a caller (the server
// was started by the user, not by an agent of Shepherd's) the user's grants
// apply, but the process is still sandboxed.
func applyPermissions(spec *supervisor.AgentSpec, perms []string, caller Caller) {
	p := append([]string{}, perms...)
	spec.Permissions = &p
	if caller.AgentID != "" && caller.ProjectID != "" {
		spec.Caller = &supervisor.AgentRef{ProjectID: caller.ProjectID, AgentID: caller.AgentID}
	}
}
