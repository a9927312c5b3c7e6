package cli

import (
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"shepherd/backend/api"
	"shepherd/backend/supervisor"
)

// The projects: list, add, select (load); how a project argument (id, name
// or path) is read, and how projects are named in what the CLI prints.

func (e *env) projectsCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "projects",
		Short:             "list the known projects",
		Args:              positional(0, 0),
		ValidArgsFunction: e.completes(),
		RunE:              e.runs(cmdProjects),
	}
}

func cmdProjects(e *env, _ []string) error {
	out, human, err := fetch(e, api.ListProjects, api.NoInput{})
	if !human {
		return err
	}
	ps := out.Body
	if len(ps) == 0 {
		fmt.Fprintln(e.stdout, "No projects yet. Add one with: shepherd add-project PATH")
		return nil
	}
	tw := e.table()
	fmt.Fprintln(tw, "NAME\tRUNNING\tQUEUED\tSTATE\tPATH\tID")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", p.Name, liveText(p), p.Queued, pauseText(p), p.Path, p.ID)
	}
	return tw.Flush()
}

func (e *env) addProjectCmd() *cobra.Command {
	c := &cobra.Command{
		Use:               "add-project PATH [--name N]",
		Short:             "add a project folder (the same path again gives the same project)",
		Args:              positional(1, 1),
		ValidArgsFunction: e.completes(folderArg),
	}
	name := c.Flags().String("name", "", "the project's display name (default: the folder's name)")
	c.RunE = func(_ *cobra.Command, pos []string) error {
		// The engine runs with another working folder: send an absolute path.
		path, err := filepath.Abs(pos[0])
		if err != nil {
			return err
		}
		if e.host != "" {
			// A path on that host, checked there.
			if !strings.HasPrefix(pos[0], "/") {
				return usagef("add-project --host %s: give the folder's absolute path on that host", e.host)
			}
			path = pos[0]
		}
		out, human, err := fetch(e, api.AddProject, api.AddProjectIn{Body: api.ProjectInput{Path: path, Name: *name}})
		if !human {
			return err
		}
		p := out.Body
		if out.Status == http.StatusCreated {
			fmt.Fprintf(e.stdout, "Added project %s (%s) at %s\n", p.Name, p.ID, p.Path)
		} else {
			fmt.Fprintf(e.stdout, "Project %s (%s) at %s is already known\n", p.Name, p.ID, p.Path)
		}
		return nil
	}
	return c
}

func (e *env) selectCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "select P",
		Short:             "load a project: check every agent against reality and print what was found",
		Args:              positional(1, 1),
		ValidArgsFunction: e.completes(projectArg),
		RunE:              e.runs(cmdSelect),
	}
}

func cmdSelect(e *env, pos []string) error {
	id, err := e.resolveProject(pos[0])
	if err != nil {
		return err
	}
	out, human, err := fetch(e, api.SelectProject, api.ProjectIn{Project: id})
	if !human {
		return err
	}
	sum := out.Body
	fmt.Fprintf(e.stdout, "Project %s selected: %d agent(s)", e.projectNames().of(sum.ProjectID), sum.Total)
	keys := make([]string, 0, len(sum.Counts))
	for k := range sum.Counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		if sum.Counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, sum.Counts[k]))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(e.stdout, " — %s", strings.Join(parts, ", "))
	}
	fmt.Fprintln(e.stdout)
	if len(sum.Agents) > 0 {
		tw := e.table()
		fmt.Fprintln(tw, "AGENT\tOUTCOME\tSTATUS\tEXIT\tDETAIL")
		for _, a := range sum.Agents {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.AgentID, a.Outcome, dash(a.Status), exitText(a.ExitCode, ""), dash(a.Detail))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, c := range sum.Corrupt {
		fmt.Fprintf(e.stdout, "Corrupt record of %s moved to %s: %s\n", c.AgentID, c.MovedTo, c.Problem)
	}
	return nil
}

// resolveProject turns a project argument (id, name or path) into its id. An
// argument that matches nothing is passed on as is, so that the engine
// answers ProjectNotFound in its own words.
func (e *env) resolveProject(arg string) (string, error) {
	out, _, err := call(e, api.ListProjects, api.NoInput{})
	if err != nil {
		return "", err
	}
	ps := out.Body
	for _, p := range ps {
		if p.ID == arg {
			return p.ID, nil
		}
	}
	var byName []supervisor.ProjectView
	for _, p := range ps {
		if p.Name == arg {
			byName = append(byName, p)
		}
	}
	if len(byName) == 1 {
		return byName[0].ID, nil
	}
	if len(byName) > 1 {
		ids := make([]string, len(byName))
		for i, p := range byName {
			ids[i] = p.ID
		}
		return "", fmt.Errorf("project name '%s' is ambiguous (ids %s): use the id or the path", arg, strings.Join(ids, ", "))
	}
	if abs, err := filepath.Abs(arg); err == nil {
		want := canonical(abs)
		for _, p := range ps {
			if canonical(p.Path) == want {
				return p.ID, nil
			}
		}
	}
	return arg, nil
}

func canonical(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// projectNameMap names projects by their id, for tables.
type projectNameMap map[string]string

func (m projectNameMap) of(id string) string {
	if n, ok := m[id]; ok && n != "" {
		return n
	}
	return id
}

// projectNames asks the engine for the names of the known projects (empty
// when it cannot: the ids are shown then).
func (e *env) projectNames() projectNameMap {
	m := projectNameMap{}
	if out, _, err := call(e, api.ListProjects, api.NoInput{}); err == nil {
		for _, p := range out.Body {
			m[p.ID] = p.Name
		}
	}
	return m
}

// projectText names a project for a sentence: its name and, as two may share
// a name, its folder ("twin (/src/twin)"); its id when it is not known.
func (e *env) projectText(id string) string {
	if out, _, err := call(e, api.ListProjects, api.NoInput{}); err == nil {
		for _, p := range out.Body {
			if p.ID == id && p.Name != "" {
				return p.Name + " (" + p.Path + ")"
			}
		}
	}
	return id
}

// projectPath is the folder of project id ("" when unknown).
func (e *env) projectPath(id string) string {
	if out, _, err := call(e, api.ListProjects, api.NoInput{}); err == nil {
		for _, p := range out.Body {
			if p.ID == id {
				return p.Path
			}
		}
	}
	return ""
}

// liveText is a project's live agents and its cap: "3", "2/2".
func liveText(p supervisor.ProjectView) string {
	if p.MaxRunning > 0 {
		return fmt.Sprintf("%d/%d", p.Live, p.MaxRunning)
	}
	return strconv.Itoa(p.Live)
}

// pauseText says whether a project is paused, since when and why.
func pauseText(p supervisor.ProjectView) string {
	if p.FolderMissing != "" {
		return "folder missing"
	}
	if !p.Paused {
		return "active"
	}
	s := "paused"
	if p.PausedAt != nil {
		s += " since " + p.PausedAt.Local().Format("Jan 2 15:04")
	}
	if p.PauseNote != "" {
		s += ": " + p.PauseNote
	}
	return s
}
