package supervisor

import (
	"errors"
	"os"

	"shepherd/backend/sandbox"
	"shepherd/backend/shim"
	"shepherd/backend/store"
)

// SandboxSupport is what this machine can enforce of the sandbox, found
// once (Config.SandboxProbe, or by starting the shim in a new user and
// network namespace).
func (e *Engine) SandboxSupport() sandbox.Support {
	e.sbOnce.Do(func() {
		if e.cfg.SandboxProbe != nil {
			e.sb = e.cfg.SandboxProbe()
		} else {
			e.sb = sandbox.Detect([]string{e.cfg.ShimPath, shim.SandboxProbeFlag})
		}
		e.log.Info().Str("sandbox", e.sb.Summary()).Msg("sandbox support")
	})
	return e.sb
}

// specGrants turns spec's permissions into grants, checked against what
// its caller holds: nil when the agent is not sandboxed. What an agent
// creates (spec.Caller) is always sandboxed.
func (e *Engine) specGrants(spec *AgentSpec) (*sandbox.Grants, error) {
	if spec.Permissions == nil {
		if spec.Caller == nil {
			return nil, nil
		}
		spec.Permissions = &[]string{}
	}
	g, err := sandbox.Parse(*spec.Permissions)
	if err != nil {
		return nil, newErr(ErrValidation, "agent '%s': %v", spec.ID, err)
	}
	if err := e.holder(spec.Caller).Check(g); err != nil {
		return nil, newErr(ErrPermissionDenied, "agent '%s': %v", spec.ID, err)
	}
	return &g, nil
}

// holder is what the caller may grant: everything for the user (nil);
// for an agent, its own grants — an unsandboxed agent holds the network and
// writes in its cwd; an agent this engine does not know holds nothing.
func (e *Engine) holder(c *AgentRef) sandbox.Holder {
	if c == nil {
		return sandbox.User()
	}
	name := "agent '" + c.AgentID + "'"
	_, a, err := e.agent(c.ProjectID, c.AgentID)
	if err != nil {
		return sandbox.Holder{Name: name + " (not known to this engine)"}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return sandbox.AgentHolder(name, a.rec.Sandbox, a.rec.Cwd)
}

// saveGrants writes (or, for an agent no longer sandboxed, removes) the
// agent's sandbox.json.
func (e *Engine) saveGrants(rec *store.Record) error {
	path := e.st.SandboxPath(rec.ProjectID, rec.ID)
	if rec.Sandbox == nil {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return sandbox.Save(path, *rec.Sandbox)
}

// sandboxFor checks that this machine can enforce rec's sandbox and that
// its sandbox.json says what the record does (written again when it is
// missing or differs), for the shim; "" for an agent that is not sandboxed.
func (e *Engine) sandboxFor(rec *store.Record) (string, error) {
	if rec.Sandbox == nil {
		return "", nil
	}
	if err := e.SandboxSupport().Check(*rec.Sandbox); err != nil {
		return "", newErr(ErrSandboxUnavailable, "Process '%s' is not started: %v", rec.ID, err)
	}
	path := e.st.SandboxPath(rec.ProjectID, rec.ID)
	if g, err := sandbox.Load(path); err != nil || !sandbox.Equal(&g, rec.Sandbox) {
		if err := e.saveGrants(rec); err != nil {
			return "", newErr(ErrSandboxUnavailable, "Process '%s' is not started: write its sandbox.json: %v", rec.ID, err)
		}
	}
	return path, nil
}
