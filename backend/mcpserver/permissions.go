package mcpserver

import (
	"fmt"

	"shepherd/backend/supervisor"
)

// applyPermissions puts the sandbox grants asked for on the spec.
func applyPermissions(spec *supervisor.AgentSpec, perms []string, caller Caller) error {
	if len(perms) > 0 {
		return fmt.Errorf("ValidationError: permissions are not supported by this engine")
	}
	return nil
}
