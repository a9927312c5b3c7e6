package cli

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"

	"shepherd/backend/api"
	"shepherd/backend/presets"
	"shepherd/backend/store"
	"shepherd/backend/supervisor"
	"shepherd/backend/workspace"
)

// worktreeFlags are create's --worktree, --no-worktree and --base.
type worktreeFlags struct {
	on, off *bool
	base    *string
}

func addWorktreeFlags(fs *flag.FlagSet) worktreeFlags {
	return worktreeFlags{
		on:   fs.Bool("worktree", false, "run it in a git worktree of its own"),
		off:  fs.Bool("no-worktree", false, "with --preset: run it in the project folder"),
		base: fs.String("base", "", "with --worktree: the branch to start from"),
	}
}

// apply puts the worktree choice on spec: asked for with --worktree, and by
// default for a preset when the project is a git repository.
func (f worktreeFlags) apply(e *env, projectID string, spec *supervisor.AgentSpec, preset bool) error {
	if *f.on && *f.off {
		return usagef("use either --worktree or --no-worktree, not both")
	}
	on := *f.on
	if !on && !*f.off && preset {
		if path := e.projectPath(projectID); path != "" {
			on = presets.WorktreeByDefault(path)
		}
	}
	if *f.base != "" && !on {
		return usagef("--base goes with --worktree")
	}
	if on {
		spec.Workspace = &workspace.Workspace{Worktree: true, Base: *f.base}
	}
	return nil
}

// projectPath is the folder of project id ("" when unknown).
func (e *env) projectPath(id string) string {
	var ps []store.Project
	if _, err := e.call(http.MethodGet, "/v1/projects", nil, &ps); err == nil {
		for _, p := range ps {
			if p.ID == id {
				return p.Path
			}
		}
	}
	return ""
}

// worktreeRows adds a worktree agent's rows to `shepherd get`.
func worktreeRows(row func(k, v string), r *store.Record) {
	w := r.Workspace
	if w == nil || !w.Worktree {
		return
	}
	row("Worktree", w.Path)
	state := fmt.Sprintf("%d ahead, %d behind %s", w.Ahead, w.Behind, w.Base)
	if w.Dirty {
		state += ", uncommitted changes"
	}
	row("Branch", w.Branch+" ("+state+")")
	if w.Problem != "" {
		row("Problem", w.Problem)
	}
	if w.Warning != "" {
		row("Warning", w.Warning)
	}
}

func setupDiff(fs *flag.FlagSet) runFunc {
	patch := fs.Bool("patch", false, "print each file's hunks too")
	return func(e *env, pos, _ []string) error {
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		var d workspace.Diff
		if human, err := e.fetch(http.MethodGet, agentURL(id, pos[1], "diff"), nil, &d); !human {
			return err
		}
		printDiff(e.stdout, pos[1], &d, *patch)
		return nil
	}
}

// diffMark is a file's one-letter status, as git status shows it.
var diffMark = map[string]string{"added": "A", "deleted": "D", "modified": "M", "renamed": "R", "copied": "C", "untracked": "?"}

func printDiff(w io.Writer, agent string, d *workspace.Diff, patch bool) {
	from := d.From
	if len(from) > 10 {
		from = from[:10]
	}
	if len(d.Files) == 0 {
		fmt.Fprintf(w, "%s: no changes against %s (%s)\n", agent, d.Base, from)
		return
	}
	fmt.Fprintf(w, "%s against %s (%s): %d file(s), +%d -%d\n", agent, d.Base, from, len(d.Files), d.Added, d.Deleted)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, f := range d.Files {
		name := f.Path
		if f.OldPath != "" {
			name = f.OldPath + " -> " + f.Path
		}
		counts := fmt.Sprintf("+%d -%d", f.Added, f.Deleted)
		if f.Binary {
			counts = "binary"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", diffMark[f.Status], name, counts)
	}
	tw.Flush()
	if d.Truncated {
		fmt.Fprintln(w, "(the diff is too large: hunks left out)")
	}
	if !patch {
		return
	}
	for _, f := range d.Files {
		fmt.Fprintf(w, "\n--- %s\n", f.Path)
		for _, h := range f.Hunks {
			fmt.Fprintln(w, h.Header)
			for _, l := range h.Lines {
				fmt.Fprintln(w, l.Op+l.Text)
			}
		}
	}
}

// removeFlags are rm's choice for a worktree agent's worktree.
type removeFlags struct {
	keep, merge, discard, discardChanges *bool
}

func addRemoveFlags(fs *flag.FlagSet) removeFlags {
	return removeFlags{
		keep:           fs.Bool("keep", false, "worktree: remove it, keep its branch (default)"),
		merge:          fs.Bool("merge", false, "worktree: merge its branch into the base"),
		discard:        fs.Bool("discard", false, "worktree: remove it and delete its branch"),
		discardChanges: fs.Bool("discard-changes", false, "worktree: let uncommitted changes go"),
	}
}

// query adds the choice to q.
func (f removeFlags) query(q url.Values) error {
	n := 0
	for how, set := range map[string]bool{workspace.Keep: *f.keep, workspace.Merge: *f.merge, workspace.Discard: *f.discard} {
		if set {
			q.Set("worktree", how)
			n++
		}
	}
	if n > 1 {
		return usagef("use one of --keep, --merge and --discard")
	}
	if *f.discardChanges {
		q.Set("discardChanges", "true")
	}
	return nil
}

// askDiscard asks on a terminal whether a dirty worktree's changes may go;
// false when there is no terminal to ask on.
func askDiscard(e *env, err error) bool {
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Name != supervisor.ErrWorktreeDirty.Error() {
		return false
	}
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		return false
	}
	fmt.Fprintf(e.stderr, "%s\nLose the uncommitted changes? [y/N] ", ae.Message)
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	return strings.EqualFold(strings.TrimSpace(line), "y") || strings.EqualFold(strings.TrimSpace(line), "yes")
}

// printWorktreeMade tells where a new agent's worktree is.
func printWorktreeMade(w io.Writer, r *store.Record) {
	if ws := r.Workspace; ws != nil && ws.Worktree {
		fmt.Fprintf(w, "  worktree %s on branch %s from %s\n", ws.Path, ws.Branch, ws.Base)
		if ws.Warning != "" {
			fmt.Fprintf(w, "  warning: %s\n", ws.Warning)
		}
	}
}
