package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"shepherd/backend/api"
	"shepherd/backend/sandbox"
	"shepherd/backend/termsafe"
)

// Shell completion: `shepherd completion SHELL` prints cobra's script for
// the shell; the script asks `shepherd __complete …` (cobra's hidden verb)
// for each completion, which completes verbs and flags from the command
// tree, fixed flag values from the lists below, and projects and agents
// from the running engine (through env.connect, as every verb).

// engineName is the headless engine's executable, which is the CLI too.
const engineName = "shepherd-engine"

// shells are the shells `shepherd completion` writes a script for.
var shells = []string{"bash", "zsh", "fish", "powershell"}

// completionTimeout bounds what a completion waits for the engine: a shell
// must not hang on an engine that does not answer.
var completionTimeout = 2 * time.Second

func (e *env) completionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "print the shell's completion script: verbs, flags, and the projects and agents of the running engine",
		Long: `Load it in the shell's start-up file:
  bash   source <(shepherd completion bash)        (needs bash-completion)
  zsh    source <(shepherd completion zsh)         (after compinit)
  fish   shepherd completion fish | source
  pwsh   shepherd completion powershell | Out-String | Invoke-Expression`,
		Args:              positional(1, 1),
		ValidArgsFunction: e.completes(words(shells...)),
		RunE: func(c *cobra.Command, args []string) error {
			root := c.Root()
			// The script completes the command that wrote it: shepherd, or
			// shepherd-engine where only the engine is installed.
			if filepath.Base(os.Args[0]) == engineName {
				root.Use = engineName
			}
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(e.stdout, true)
			case "zsh":
				return root.GenZshCompletion(e.stdout)
			case "fish":
				return root.GenFishCompletion(e.stdout, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(e.stdout)
			}
			return usagef("completion: unknown shell %q%s (bash, zsh, fish or powershell)", args[0], didYouMean(args[0], shells, ""))
		},
	}
}

// argKind completes one positional argument; args are those before it.
type argKind func(e *env, c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective)

// completes completes a verb's positional arguments, one kind each; none
// past the last.
func (e *env) completes(kinds ...argKind) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) >= len(kinds) {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return kinds[len(args)](e, c, args, toComplete)
	}
}

// asking is e for one completion: the engine is asked with a deadline.
func (e *env) asking() (*env, context.CancelFunc) {
	q := *e
	ctx, cancel := context.WithTimeout(e.ctx, completionTimeout)
	q.ctx = ctx
	return &q, cancel
}

// projectArg completes P: the projects' names, or their ids where a name
// is shared (or unfit for a shell); nothing when no engine answers.
func projectArg(e *env, _ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	q, cancel := e.asking()
	defer cancel()
	out, _, err := call(q, api.ListProjects, api.NoInput{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	named := map[string]int{}
	for _, p := range out.Body {
		named[p.Name]++
	}
	var comps []cobra.Completion
	for _, p := range out.Body {
		word, desc := p.Name, p.Path
		if named[p.Name] > 1 || p.Name == "" || describe(p.Name) != p.Name || strings.ContainsAny(p.Name, " '\"\\$`") {
			word, desc = p.ID, p.Name+" ("+p.Path+")"
		}
		if strings.HasPrefix(word, toComplete) {
			comps = append(comps, cobra.CompletionWithDesc(word, describe(desc)))
		}
	}
	return comps, cobra.ShellCompDirectiveNoFileComp
}

// agentArg completes A: the agents of the project before it, with their
// status (and name).
func agentArg(e *env, _ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	q, cancel := e.asking()
	defer cancel()
	id, err := q.resolveProject(args[0])
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	out, _, err := call(q, api.ListAgents, api.ListAgentsIn{Project: id})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var comps []cobra.Completion
	for _, r := range out.Body {
		if !strings.HasPrefix(r.ID, toComplete) {
			continue
		}
		desc := statusText(r)
		if r.Name != "" && r.Name != r.ID {
			desc = r.Name + " · " + desc
		}
		comps = append(comps, cobra.CompletionWithDesc(r.ID, describe(desc)))
	}
	return comps, cobra.ShellCompDirectiveNoFileComp
}

// describe makes text a completion's description: one line, its control
// characters shown escaped (names can be what an agent chose).
func describe(s string) string {
	return strings.Join(strings.Fields(string(termsafe.Escape([]byte(s)))), " ")
}

// folderArg completes a folder.
func folderArg(*env, *cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}

// verbArg completes a verb's name (help's argument).
func verbArg(_ *env, c *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var comps []cobra.Completion
	for _, v := range c.Root().Commands() {
		if !v.Hidden && strings.HasPrefix(v.Name(), toComplete) {
			comps = append(comps, cobra.CompletionWithDesc(v.Name(), v.Short))
		}
	}
	return comps, cobra.ShellCompDirectiveNoFileComp
}

// words completes one of a fixed set of words.
func words(ws ...string) argKind {
	return func(_ *env, c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return fixed(ws...)(c, args, toComplete)
	}
}

// fixed completes a flag's value from a fixed set.
func fixed(ws ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var comps []cobra.Completion
		for _, w := range ws {
			if strings.HasPrefix(w, toComplete) {
				comps = append(comps, w)
			}
		}
		return comps, cobra.ShellCompDirectiveNoFileComp
	}
}

// folders completes a flag's value with a folder.
func folders(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}

// completePermissions completes --permissions' comma-separated tags: the
// next tag after those typed (@write: is followed by a folder).
func completePermissions(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	typed, cur := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		typed, cur = toComplete[:i+1], toComplete[i+1:]
	}
	var comps []cobra.Completion
	for _, tag := range []string{sandbox.TagNetwork, sandbox.TagWritePrefix} {
		if strings.HasPrefix(tag, cur) && (tag == sandbox.TagWritePrefix || !slices.Contains(splitTags(typed), tag)) {
			comps = append(comps, typed+tag)
		}
	}
	return comps, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}
