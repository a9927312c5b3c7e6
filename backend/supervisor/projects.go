package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"shepherd/backend/store"
	"shepherd/backend/supervisor/figures"
)

// Projects lists the known projects, oldest first.
func (e *Engine) Projects() []store.Project {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]store.Project, 0, len(e.projects))
	for _, p := range e.projects {
		out = append(out, p.info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}

// AddProject registers a folder. The id is stable for the path; adding the
// same path again returns the existing project and created=false. A new
// project is loaded (and so watched) at once.
func (e *Engine) AddProject(path, name string) (store.Project, bool, error) {
	if path == "" {
		return store.Project{}, false, newErr(ErrValidation, "project path is empty")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return store.Project{}, false, newErr(ErrValidation, "project path %q: %v", path, err)
	}
	if err := checkDir(abs); err != nil {
		return store.Project{}, false, newErr(ErrValidation, "project folder %s", err)
	}
	id := store.ProjectID(abs)
	e.mu.Lock()
	if p, ok := e.projects[id]; ok {
		e.mu.Unlock()
		return p.info, false, nil
	}
	if name == "" {
		name = filepath.Base(abs)
	}
	info := store.Project{ID: id, Name: name, Path: abs, CreatedAt: e.clock.Now().UTC()}
	if err := os.MkdirAll(e.st.ProjectDir(id), 0o700); err != nil {
		e.mu.Unlock()
		return store.Project{}, false, err
	}
	if err := e.saveProjectsLocked(map[string]store.Project{id: info}); err != nil {
		e.mu.Unlock()
		return store.Project{}, false, err
	}
	p := newProject(info)
	e.projects[id] = p
	e.mu.Unlock()
	e.log.Info().Str("project", id).Str("path", abs).Msg("project added")
	if _, err := e.ensureLoaded(p); err != nil {
		return info, true, err
	}
	return info, true, nil
}

// checkDir explains why path is not a usable folder, or returns nil.
func checkDir(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s does not exist", path)
		}
		return fmt.Errorf("%s cannot be read: %v", path, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s cannot be read: %v", path, err)
	}
	f.Close()
	return nil
}

// RenameProject gives a project another display name.
func (e *Engine) RenameProject(projectID, name string) (store.Project, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return store.Project{}, newErr(ErrValidation, "project name is empty")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.projects[projectID]
	if !ok {
		return store.Project{}, errProjectNotFound(projectID)
	}
	info := p.info
	info.Name = name
	if err := e.saveProjectsLocked(map[string]store.Project{projectID: info}); err != nil {
		return store.Project{}, err
	}
	p.info = info
	return info, nil
}

// RemoveProject forgets a project. One with live agents needs force, which
// stops them first. Its folder of records and logs stays on disk, so adding
// the same path again brings its agents back.
func (e *Engine) RemoveProject(ctx context.Context, projectID string, force bool) error {
	p, err := e.project(projectID)
	if err != nil {
		return err
	}
	live := 0
	for _, a := range p.list() {
		a.mu.Lock()
		if a.rec.Status.Live() {
			live++
		}
		a.mu.Unlock()
	}
	if live > 0 {
		if !force {
			return newErr(ErrProjectHasAgents, "Project '%s' has %d running agent(s). Stop them before removing it.", e.projectName(projectID), live)
		}
		if _, err := e.StopAll(ctx, projectID); err != nil {
			return err
		}
	}
	e.stopMonitor(p)
	for _, a := range p.list() {
		a.mu.Lock()
		e.cancelRestart(a)
		a.end() // its records stay on disk; this engine stops acting on them
		a.mu.Unlock()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.projects, projectID)
	if e.selected == projectID {
		e.selected = ""
	}
	if err := e.saveProjectsLocked(nil); err != nil {
		return err
	}
	e.appendEvent(projectID, store.Event{Time: e.clock.Now().UTC(), Event: "project:removed"})
	e.log.Info().Str("project", projectID).Msg("project removed")
	return nil
}

// saveProjectsLocked writes projects.json from e.projects, with changed or
// new entries taken from override. e.mu is held.
func (e *Engine) saveProjectsLocked(override map[string]store.Project) error {
	all := make([]store.Project, 0, len(e.projects)+len(override))
	for id, p := range e.projects {
		if _, ok := override[id]; !ok {
			all = append(all, p.info)
		}
	}
	for _, o := range override {
		all = append(all, o)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].CreatedAt.Before(all[j].CreatedAt) })
	return e.st.SaveProjects(all)
}

// loaded are the projects loaded by now.
func (e *Engine) loaded() []*project {
	e.mu.Lock()
	ps := make([]*project, 0, len(e.projects))
	for _, p := range e.projects {
		ps = append(ps, p)
	}
	e.mu.Unlock()
	out := ps[:0]
	for _, p := range ps {
		p.mu.Lock()
		if p.loaded {
			out = append(out, p)
		}
		p.mu.Unlock()
	}
	return out
}

// known is a known project as it is (loaded or not); nil if none.
func (e *Engine) known(id string) *project {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.projects[id]
}

// project returns a known project, loading (and syncing) it on first use.
func (e *Engine) project(id string) (*project, error) {
	e.mu.Lock()
	p, ok := e.projects[id]
	e.mu.Unlock()
	if !ok {
		return nil, errProjectNotFound(id)
	}
	if _, err := e.ensureLoaded(p); err != nil {
		return nil, err
	}
	return p, nil
}

func (e *Engine) agent(projectID, agentID string) (*project, *agent, error) {
	p, err := e.project(projectID)
	if err != nil {
		return nil, nil, err
	}
	p.mu.Lock()
	a, ok := p.agents[agentID]
	p.mu.Unlock()
	if !ok {
		return nil, nil, errNotFound(agentID)
	}
	return p, a, nil
}

// ListAgents returns the records of a project, oldest first.
func (e *Engine) ListAgents(projectID string) ([]*store.Record, error) {
	p, err := e.project(projectID)
	if err != nil {
		return nil, err
	}
	return e.records(p), nil
}

func (e *Engine) records(p *project) []*store.Record {
	as := p.list()
	out := make([]*store.Record, 0, len(as))
	for _, a := range as {
		a.mu.Lock()
		out = append(out, e.snapshot(a))
		a.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	figures.WithTreeTotals(out)
	return out
}

// GetAgent returns one record.
func (e *Engine) GetAgent(projectID, agentID string) (*store.Record, error) {
	p, a, err := e.agent(projectID, agentID)
	if err != nil {
		return nil, err
	}
	tree := e.treeTotalsOf(p, agentID)
	a.mu.Lock()
	defer a.mu.Unlock()
	r := e.snapshot(a)
	r.TreeTotals = tree
	return r, nil
}

// AllAgents returns the records of every loaded project (the dashboard).
func (e *Engine) AllAgents() []*store.Record {
	e.mu.Lock()
	ps := make([]*project, 0, len(e.projects))
	for _, p := range e.projects {
		ps = append(ps, p)
	}
	e.mu.Unlock()
	sort.Slice(ps, func(i, j int) bool { return ps[i].info.CreatedAt.Before(ps[j].info.CreatedAt) })
	var out []*store.Record
	for _, p := range ps {
		p.mu.Lock()
		loaded := p.loaded
		p.mu.Unlock()
		if loaded {
			out = append(out, e.records(p)...)
		}
	}
	return out
}

// EventsPath is the project's events.jsonl.
func (e *Engine) EventsPath(projectID string) (string, error) {
	if _, err := e.project(projectID); err != nil {
		return "", err
	}
	return e.st.EventsPath(projectID), nil
}

// Events returns the last limit events of a project (limit <= 0: all that
// the bounded read finds) that concern agentID ("" for all), oldest first.
func (e *Engine) Events(projectID, agentID string, limit int) ([]store.Event, error) {
	if _, err := e.project(projectID); err != nil {
		return nil, err
	}
	return e.st.ReadEvents(projectID, agentID, limit)
}

// Selected is the id of the selected project ("" if none).
func (e *Engine) Selected() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.selected
}
