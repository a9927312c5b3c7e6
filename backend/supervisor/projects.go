package supervisor

import (
	"context"
	"sort"
	"strings"

	"shepherd/backend/store"
)

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
		return store.Project{}, newErr(ErrProjectNotFound, "Project '%s' not found", projectID)
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
			return newErr(ErrProjectHasAgents, "Project '%s' has %d running agent(s). Stop them before removing it.", projectID, live)
		}
		if _, err := e.StopAll(ctx, projectID); err != nil {
			return err
		}
	}
	e.stopMonitor(p)
	for _, a := range p.list() {
		a.mu.Lock()
		if a.restartTimer != nil {
			a.restartTimer.Stop()
		}
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

// saveProjectsLocked writes projects.json from e.projects, with changed
// entries taken from override. e.mu is held.
func (e *Engine) saveProjectsLocked(override map[string]store.Project) error {
	all := make([]store.Project, 0, len(e.projects))
	for id, p := range e.projects {
		if o, ok := override[id]; ok {
			all = append(all, o)
		} else {
			all = append(all, p.info)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].CreatedAt.Before(all[j].CreatedAt) })
	return e.st.SaveProjects(all)
}
