package supervisor

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"shepherd/backend/presets"
	"shepherd/backend/proc"
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
	tags := *spec.Permissions
	g, err := e.checkGrants(spec, tags)
	if err != nil {
		return nil, err
	}
	// An agent CLI's preset grants the folder it keeps its own state in
	// (Claude Code ~/.claude, Codex ~/.codex), made if missing — once the
	// caller is known to hold it: nothing is made for a request that is
	// then refused.
	dir, env := presets.SandboxNeeds(spec.Profile, spec.Env)
	if dir == "" || !filepath.IsAbs(dir) {
		return &g, nil
	}
	if tag := sandbox.TagWritePrefix + filepath.Clean(dir); !slices.Contains(tags, tag) {
		if err := e.checkResolved(spec, sandbox.Grants{WriteDirs: []string{sandbox.RealPath(dir)}}); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return &g, nil // without its folder, no grant of it
		}
		with := append(append([]string{}, tags...), tag)
		if g, err = e.checkGrants(spec, with); err != nil {
			return nil, err
		}
		spec.Permissions = &with
	}
	for k, v := range env {
		if _, ok := spec.Env[k]; !ok {
			if spec.Env == nil {
				spec.Env = map[string]string{}
			}
			spec.Env[k] = v
		}
	}
	return &g, nil
}

// checkGrants parses tags and checks the grants they make (checkResolved).
func (e *Engine) checkGrants(spec *AgentSpec, tags []string) (sandbox.Grants, error) {
	g, err := sandbox.Parse(tags)
	if err != nil {
		return g, newErr(ErrValidation, "agent '%s': %v", spec.ID, err)
	}
	return g, e.checkResolved(spec, g)
}

// checkResolved checks grants of resolved folders: the caller holds them,
// and none is (in) Shepherd's own folders.
func (e *Engine) checkResolved(spec *AgentSpec, g sandbox.Grants) error {
	if err := e.holder(spec.Caller).Check(g); err != nil {
		return newErr(ErrPermissionDenied, "agent '%s': %v", spec.ID, err)
	}
	for _, d := range g.WriteDirs {
		for _, p := range e.private() {
			if within(d, p) {
				return newErr(ErrValidation, "agent '%s': %s%s is Shepherd's own folder (%s), which no sandbox may write or see", spec.ID, sandbox.TagWritePrefix, d, p)
			}
		}
	}
	return nil
}

// private are the folders hidden from every sandbox, resolved to real
// paths (the grants are).
func (e *Engine) private() []string {
	e.privOnce.Do(func() {
		dirs := append([]string{e.cfg.DataDir}, e.cfg.Private...)
		for _, d := range dirs {
			if d == "" {
				continue
			}
			if real, err := filepath.EvalSymlinks(d); err == nil {
				d = real
			}
			if !slices.Contains(e.priv, d) {
				e.priv = append(e.priv, d)
			}
		}
	})
	return e.priv
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
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
	// Grants were resolved to real folders when given; one that resolves
	// elsewhere now (a symlink swapped in) is not followed. The shim checks
	// again, and the box opens each without following any symlink.
	for _, d := range rec.Sandbox.WriteDirs {
		if real, err := filepath.EvalSymlinks(d); err != nil || real != d {
			why := "cannot be resolved"
			if err == nil {
				why = "now leads to " + real
			}
			return "", newErr(ErrSandboxUnavailable, "Process '%s' is not started: its granted folder %s %s (a symlink or a swapped folder); grant the real folder again", rec.ID, d, why)
		}
	}
	path := e.st.SandboxPath(rec.ProjectID, rec.ID)
	if g, err := sandbox.Load(path); err != nil || !sandbox.Equal(&g, rec.Sandbox) {
		if err := e.saveGrants(rec); err != nil {
			return "", newErr(ErrSandboxUnavailable, "Process '%s' is not started: write its sandbox.json: %v", rec.ID, err)
		}
	}
	return path, nil
}

// boxSpec adds to spec what rec's box keeps read-only inside its grants
// (git dirs, the agent CLIs' configuration; the configuration names that do
// not exist yet are made now, once the start passed every check) and its
// project's limits, with a cgroup of its own where the engine has one.
func (e *Engine) boxSpec(rec *store.Record, env []string, spec *proc.Spec) error {
	home, _ := os.UserHomeDir()
	prot := sandbox.Protect(*rec.Sandbox, env, os.Environ(), home)
	if err := sandbox.MakePlaceholders(prot.Make); err != nil {
		return newErr(ErrSandboxUnavailable, "Process '%s' is not started: %v", rec.ID, err)
	}
	spec.ReadOnly = prot.Paths()
	spec.Limits = e.settingsOf(rec.ProjectID).BoxLimits()
	if sup := e.SandboxSupport(); sup.Limits == sandbox.LimitsCgroup {
		dir, err := sandbox.NewBoxCgroup(sup.CgroupBase, rec.ID, spec.Limits)
		if err != nil {
			return newErr(ErrSandboxUnavailable, "Process '%s' is not started: %v", rec.ID, err)
		}
		spec.Limits.Cgroup, spec.Cgroup = true, dir
	}
	return nil
}
