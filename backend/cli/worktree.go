package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
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

func addWorktreeFlags(c *cobra.Command) worktreeFlags {
	fs := c.Flags()
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

func (e *env) diffCmd() *cobra.Command {
	c := &cobra.Command{
		Use:               "diff P A [--patch]",
		Short:             "a worktree agent's changes against its base",
		Args:              positional(2, 2),
		ValidArgsFunction: e.completes(projectArg, agentArg),
	}
	patch := c.Flags().Bool("patch", false, "print each file's hunks too")
	c.RunE = func(_ *cobra.Command, pos []string) error {
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		out, human, err := fetch(e, api.GetDiff, api.AgentIn{Project: id, Agent: pos[1]})
		if !human {
			return err
		}
		printDiff(e.stdout, pos[1], out.Body, *patch)
		return nil
	}
	return c
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
	message                              *string
}

func addRemoveFlags(c *cobra.Command) removeFlags {
	fs := c.Flags()
	return removeFlags{
		keep:           fs.Bool("keep", false, "worktree: remove it, keep its branch (default)"),
		merge:          fs.Bool("merge", false, "worktree: commit its uncommitted work, merge its branch into the base"),
		discard:        fs.Bool("discard", false, "worktree: remove it and delete its branch"),
		discardChanges: fs.Bool("discard-changes", false, "worktree: let uncommitted changes go (keep, discard)"),
		message:        fs.StringP("m", "m", "", "with --merge: the message of the commit of its uncommitted work"),
	}
}

// apply puts the choice in a removal.
func (f removeFlags) apply(in *api.RemoveAgentIn) error {
	n := 0
	for how, set := range map[string]bool{workspace.Keep: *f.keep, workspace.Merge: *f.merge, workspace.Discard: *f.discard} {
		if set {
			in.Worktree = how
			n++
		}
	}
	if n > 1 {
		return usagef("use one of --keep, --merge and --discard")
	}
	in.DiscardChanges = *f.discardChanges
	if *f.message != "" {
		if !*f.merge {
			return usagef("-m goes with --merge")
		}
		in.Message = *f.message
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

func (e *env) mergeCmd() *cobra.Command {
	c := &cobra.Command{
		Use: "merge P A [-m MSG] [--plan]",
		Short: "merge a worktree agent's work into its base: what is not committed is committed first " +
			"(-m: its message), then its branch merged; the agent stays",
		Args:              positional(2, 2),
		ValidArgsFunction: e.completes(projectArg, agentArg),
	}
	message := c.Flags().StringP("m", "m", "", "the message of the commit of its uncommitted work (default: one naming the agent and the files)")
	plan := c.Flags().Bool("plan", false, "only show what would be committed and merged")
	c.RunE = func(_ *cobra.Command, pos []string) error {
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		if *plan {
			if *message != "" {
				return usagef("-m does not go with --plan")
			}
			out, human, err := fetch(e, api.GetMergePlan, api.AgentIn{Project: id, Agent: pos[1]})
			if !human {
				return err
			}
			printMergePlan(e.stdout, &out.Body)
			return nil
		}
		out, human, err := fetch(e, api.MergeWorktree, api.MergeIn{Project: id, Agent: pos[1], Body: &api.MergeRequest{Message: *message}})
		if err != nil {
			return err
		}
		res := out.Body
		if res.Conflict != nil {
			if human {
				printConflict(e.stdout, pos[0], pos[1], e.projectPath(id), res.Conflict)
			}
			return fmt.Errorf("merging %s into %s conflicts: not merged (nothing was lost)", res.Conflict.Branch, res.Conflict.Base)
		}
		if human {
			printMerged(e.stdout, pos[1], &res)
		}
		return nil
	}
	return c
}

func printMergePlan(w io.Writer, p *workspace.MergePlan) {
	fmt.Fprintf(w, "Merge %s into %s in %s (%d ahead, %d behind)\n", p.Branch, p.Base, p.Repo, p.Ahead, p.Behind)
	switch {
	case p.Merging && len(p.Conflicts) > 0:
		fmt.Fprintf(w, "The merge of %s into the branch is under way; still in conflict: %s\n", p.Base, strings.Join(p.Conflicts, ", "))
	case p.Merging:
		fmt.Fprintf(w, "The merge of %s into the branch is resolved: it is committed first.\n", p.Base)
	}
	if len(p.Uncommitted) > 0 {
		fmt.Fprintf(w, "Committed first, as %s:\n", p.Identity)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, c := range p.Uncommitted {
			fmt.Fprintf(tw, "  %s\t%s\n", c.Status, c.Path)
		}
		tw.Flush()
		fmt.Fprintf(w, "with the message (-m to change it):\n")
		for _, l := range strings.Split(strings.TrimRight(p.Message, "\n"), "\n") {
			fmt.Fprintln(w, strings.TrimRight("  | "+l, " "))
		}
	}
	switch {
	case p.Blocked != "":
		fmt.Fprintf(w, "It cannot merge now: %s\n", p.Blocked)
	case p.UpToDate:
		fmt.Fprintf(w, "Nothing to merge: %s has all of %s.\n", p.Base, p.Branch)
	}
}

func printMerged(w io.Writer, agent string, res *workspace.MergeResult) {
	if res.Committed != "" {
		fmt.Fprintf(w, "Committed %s's uncommitted work as %s.\n", agent, shortID(res.Committed))
	}
	switch {
	case res.UpToDate:
		fmt.Fprintf(w, "Nothing to merge: the base already has %s's work.\n", agent)
	case res.FastForward:
		fmt.Fprintf(w, "Merged %s into its base (fast-forward to %s).\n", agent, shortID(res.Head))
	default:
		fmt.Fprintf(w, "Merged %s into its base (merge commit %s).\n", agent, shortID(res.Head))
	}
}

// printConflict says what conflicted and the two ways out.
func printConflict(w io.Writer, project, agent, repo string, c *workspace.ConflictError) {
	fmt.Fprintf(w, "Merging %s into %s conflicts in: %s\n", c.Branch, c.Base, strings.Join(c.Files, ", "))
	fmt.Fprintf(w, "The merge was aborted: nothing is lost, your checkout is as it was.\n")
	if c.Committed != "" {
		fmt.Fprintf(w, "The uncommitted work is committed on %s as %s.\n", c.Branch, shortID(c.Committed))
	}
	if repo == "" {
		repo = "<the project>"
	}
	fmt.Fprintf(w, "Two ways out:\n")
	fmt.Fprintf(w, "  keep the branch and resolve by hand:  cd %s && git merge %s\n", repo, c.Branch)
	fmt.Fprintf(w, "  ask %s to merge %s and resolve:  shepherd resolve %s %s\n", agent, c.Base, project, agent)
}

func shortID(c string) string {
	if len(c) > 10 {
		return c[:10]
	}
	return c
}

func (e *env) resolveCmd() *cobra.Command {
	c := &cobra.Command{
		Use: "resolve P A [-m MSG]",
		Short: "after a merge conflict: ask a worktree agent to merge its base and resolve the conflicts " +
			"(it resumes with that instruction)",
		Args:              positional(2, 2),
		ValidArgsFunction: e.completes(projectArg, agentArg),
	}
	message := c.Flags().StringP("m", "m", "", "the message of the commit of its uncommitted work, made first")
	c.RunE = func(_ *cobra.Command, pos []string) error {
		id, err := e.resolveProject(pos[0])
		if err != nil {
			return err
		}
		out, human, err := fetch(e, api.AskToResolve, api.MergeIn{Project: id, Agent: pos[1], Body: &api.MergeRequest{Message: *message}})
		if !human {
			return err
		}
		res := out.Body
		if res.Committed != "" {
			fmt.Fprintf(e.stdout, "Committed %s's uncommitted work as %s.\n", pos[1], shortID(res.Committed))
		}
		if res.Clean {
			fmt.Fprintf(e.stdout, "The base merged into %s without a conflict (%s): nothing to resolve; merge it now with `shepherd merge %s %s`.\n",
				pos[1], shortID(res.Head), pos[0], pos[1])
			return nil
		}
		how := "resumed"
		if res.Status == "queued" {
			how = fmt.Sprintf("queued (position %d)", res.QueuePosition)
		}
		fmt.Fprintf(e.stdout, "Asked %s to resolve the conflicts in %s (%s).\nWhen it is done, `shepherd merge %s %s` commits the resolution and merges.\n",
			pos[1], strings.Join(res.Conflicts, ", "), how, pos[0], pos[1])
		return nil
	}
	return c
}
