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

// A request is checked whole before anything is made for it (SPEC, threat
// model: the engine checks a request before any side effect): its tags,
// what its caller holds and Shepherd's own folders are checked against the
// folders as they will be — an agent CLI's state folder that does not exist
// yet is placed by its nearest existing parent, resolved — and only a
// request that passes gets that folder made (grantPlan.make), then checked
// again as it is.

// grantPlan is a request's grants, checked, with what is still to be made.
type grantPlan struct {
	spec  *AgentSpec
	none  bool              // not sandboxed
	needs string            // the agent CLI's state folder, to be made if missing
	env   map[string]string // what its preset adds to the environment
}

// planGrants checks spec's permissions against what its caller holds and
// Shepherd's own folders, making nothing; nil grants when the agent is not
// sandboxed. What an agent creates (spec.Caller) is always sandboxed.
// extra are folders the request will also grant once made (its worktree).
func (e *Engine) planGrants(spec *AgentSpec, extra ...string) (*grantPlan, error) {
	if spec.Permissions == nil {
		if spec.Caller == nil {
			return &grantPlan{spec: spec, none: true}, nil
		}
		spec.Permissions = &[]string{}
	}
	pl := &grantPlan{spec: spec}
	// An agent CLI's preset grants the folder it keeps its own state in
	// (Claude Code ~/.claude, Codex ~/.codex, or the one its environment
	// names), made if missing — once the request has passed.
	if dir, env := presets.SandboxNeeds(spec.Profile, spec.Env); dir != "" && filepath.IsAbs(dir) {
		pl.needs, pl.env = filepath.Clean(dir), env
	}
	g, err := sandbox.Parse(*spec.Permissions)
	if err != nil {
		return nil, newErr(ErrValidation, "agent '%s': %v", spec.ID, err)
	}
	for _, d := range append(append([]string{}, extra...), pl.needs) {
		if d == "" {
			continue
		}
		if real := plannedPath(d); !slices.Contains(g.WriteDirs, real) {
			g.WriteDirs = append(g.WriteDirs, real)
		}
	}
	return pl, e.checkGrants(spec, g)
}

// checkGrants refuses grants beyond what spec's caller holds, and any in
// Shepherd's own folders.
func (e *Engine) checkGrants(spec *AgentSpec, g sandbox.Grants) error {
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

// make makes what the plan needs (the agent CLI's state folder) and returns
// the grants, parsed again now that every folder exists and checked again
// as they are (nil: not sandboxed). If they no longer pass (a symlink
// swapped in meanwhile), what it made is removed.
func (pl *grantPlan) make(e *Engine) (*sandbox.Grants, error) {
	if pl.none {
		return nil, nil
	}
	spec := pl.spec
	tags := *spec.Permissions
	var made []string
	if pl.needs != "" {
		var err error
		if made, err = mkdirAll(pl.needs); err == nil {
			tag := sandbox.TagWritePrefix + pl.needs
			if !slices.Contains(tags, tag) {
				tags = append(append([]string{}, tags...), tag)
				spec.Permissions = &tags
			}
			for k, v := range pl.env {
				if _, ok := spec.Env[k]; !ok {
					if spec.Env == nil {
						spec.Env = map[string]string{}
					}
					spec.Env[k] = v
				}
			}
		}
	}
	g, err := sandbox.Parse(tags)
	if err == nil {
		err = e.checkGrants(spec, g)
	} else {
		err = newErr(ErrValidation, "agent '%s': %v", spec.ID, err)
	}
	if err != nil {
		unmake(made)
		return nil, err
	}
	return &g, nil
}

// plannedPath is where path will be once made: its nearest existing parent
// resolved (symlinks followed), with the rest as written.
func plannedPath(path string) string {
	path = filepath.Clean(path)
	rest := ""
	for dir := path; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if dir == filepath.Dir(dir) {
			return path
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// mkdirAll makes dir and its missing parents (0700) and returns those it
// made, deepest last.
func mkdirAll(dir string) ([]string, error) {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		missing = append([]string{d}, missing...)
	}
	var made []string
	for _, d := range missing {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			unmake(made)
			return nil, err
		} else if err == nil {
			made = append(made, d)
		}
	}
	return made, nil
}

// unmake removes the folders mkdirAll made (if still empty), deepest first.
func unmake(made []string) {
	for i := len(made) - 1; i >= 0; i-- {
		_ = os.Remove(made[i]) // one that is no longer empty stays: its content is not ours
	}
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

// checkSandbox checks that this machine can enforce rec's sandbox and that
// its granted folders are still the folders they were resolved to (nil for
// an agent that is not sandboxed). It writes nothing.
func (e *Engine) checkSandbox(rec *store.Record) error {
	if rec.Sandbox == nil {
		return nil
	}
	if err := e.SandboxSupport().Check(*rec.Sandbox); err != nil {
		return newErr(ErrSandboxUnavailable, "Process '%s' is not started: %v", rec.ID, err)
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
			return newErr(ErrSandboxUnavailable, "Process '%s' is not started: its granted folder %s %s (a symlink or a swapped folder); grant the real folder again", rec.ID, d, why)
		}
	}
	return nil
}

// sandboxFile makes sure rec's sandbox.json says what the record does
// (written again when it is missing or differs), for the shim; "" for an
// agent that is not sandboxed. checkSandbox comes first.
func (e *Engine) sandboxFile(rec *store.Record) (string, error) {
	if rec.Sandbox == nil {
		return "", nil
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
