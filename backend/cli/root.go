package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"shepherd/backend/termsafe"
)

// The command line is a tree of cobra commands built afresh for each run
// (e.root): each verb is made by a method of env in the file of its area
// (projects.go, agents.go, logs.go, …) and sees its flags through its
// closure; the global flags are the root's persistent flags, bound to env,
// and every verb reaches the engine through env.connect.

func init() {
	// `shepherd help` lists the verbs in the order of verbs(), not sorted.
	cobra.EnableCommandSorting = false
}

// verbs is every verb, in the order `shepherd help` lists them (help
// itself comes last).
func (e *env) verbs() []*cobra.Command {
	return []*cobra.Command{
		e.projectsCmd(), e.addProjectCmd(), e.selectCmd(), e.lsCmd(), e.getCmd(), e.createCmd(),
		e.sandboxCmd(), e.startCmd(), e.resumeCmd(), e.ackCmd(), e.settingsCmd(), e.stopCmd(), e.rmCmd(),
		e.mergeCmd(), e.resolveCmd(), e.diffCmd(), e.stopAllCmd(), e.logsCmd(), e.eventsCmd(),
		e.questionsCmd(), e.allowCmd(), e.denyCmd(), e.answerCmd(), e.rulesCmd(), e.sendCmd(), e.notifyCmd(),
		e.pauseCmd(), e.unpauseCmd(), e.budgetCmd(), e.mcpCmd(), e.quitCmd(), e.psCmd(), e.statusCmd(),
		e.hostsCmd(), e.hostCmd(), e.serveCmd(), e.completionCmd(), e.hookCmd(),
	}
}

// root is the `shepherd` command with every verb under it.
func (e *env) root() *cobra.Command {
	root := &cobra.Command{
		Use:           "shepherd",
		Short:         "Shepherd supervises long-running AI coding agents as durable processes.",
		Version:       Version,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			return &usageError{msg: fmt.Sprintf("unknown command %q%s", args[0], didYouMean(args[0], verbNames(c), "")),
				hint: "Run 'shepherd help' for the list of commands."}
		},
		RunE: func(c *cobra.Command, _ []string) error {
			// No verb: the list of them, as a usage error.
			printUsage(e.stderr, c)
			return &usageError{}
		},
		PersistentPreRun: func(c *cobra.Command, _ []string) { e.escapeAgentText(c) },
	}
	root.CompletionOptions.DisableDefaultCmd = true // ours is completionCmd
	root.SetVersionTemplate("shepherd {{.Version}}\n")
	root.Flags().Bool("version", false, "print the version")
	pf := root.PersistentFlags()
	pf.BoolVar(&e.json, "json", false, "print the API's raw JSON instead of a table")
	pf.BoolVar(&e.reveal, "show-secrets", false, "print secret environment values (…KEY, …TOKEN, …) instead of masking them")
	pf.StringVar(&e.host, "host", "", "talk to the engine of this host (see shepherd hosts) through the local one")
	pf.BoolVar(&e.raw, "raw", false, "print what agents wrote as it is, control sequences included, even on a terminal (they are shown escaped there by default)")
	root.RegisterFlagCompletionFunc("host", func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return hostArg(e, c, args, toComplete)
	})
	root.SetFlagErrorFunc(flagError)
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		if c.HasParent() {
			printCommandUsage(c.OutOrStdout(), c)
		} else {
			printUsage(c.OutOrStdout(), c)
		}
	})
	root.AddCommand(e.verbs()...)
	root.SetHelpCommand(e.helpCmd())
	return root
}

// escapeAgentText makes what agents wrote inert on a terminal (termsafe):
// what a verb prints there — logs, events, names, errors an agent wrote —
// has its control sequences shown, not acted on. --raw keeps them; a pipe
// or a file gets the bytes as they are.
func (e *env) escapeAgentText(c *cobra.Command) {
	switch c.Name() {
	case "serve", "mcp", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
		return
	}
	if e.raw {
		return
	}
	if isTerminal(e.stdout) {
		w := termsafe.New(e.stdout)
		e.flush = append(e.flush, func() { w.Flush() })
		e.stdout = w
	}
	if isTerminal(e.stderr) {
		w := termsafe.New(e.stderr)
		e.flush = append(e.flush, func() { w.Flush() })
		e.stderr = w
	}
}

func (e *env) helpCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "help [COMMAND]",
		Short:             "show help",
		Args:              positional(0, 1),
		ValidArgsFunction: e.completes(verbArg),
		RunE: func(c *cobra.Command, args []string) error {
			root := c.Root()
			if len(args) == 0 {
				printUsage(e.stdout, root)
				return nil
			}
			target, _, err := root.Find(args)
			if err != nil || target == root || target.Hidden {
				return usagef("unknown command %q", args[0])
			}
			printCommandUsage(e.stdout, target)
			return nil
		},
	}
}

// runs adapts a verb's function to cobra's.
func (e *env) runs(f func(e *env, pos []string) error) func(*cobra.Command, []string) error {
	return func(_ *cobra.Command, pos []string) error { return f(e, pos) }
}

// verbNames are the names of root's verbs (not the hidden ones).
func verbNames(root *cobra.Command) []string {
	var names []string
	for _, c := range root.Commands() {
		if !c.Hidden {
			names = append(names, c.Name())
		}
	}
	return names
}

// usageError is a mistake in the command line: exit code 2.
type usageError struct {
	msg string
	// usage: cobra refused the command line; the verb's usage follows the
	// message (or hint does, when set).
	usage bool
	hint  string
}

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{msg: fmt.Sprintf(format, a...)} }

// positional checks a verb's number of arguments (max -1: any); a verb
// whose arguments end with a command line (restKey) counts those before it.
func positional(min, max int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if d := c.ArgsLenAtDash(); d >= 0 && c.Annotations[restKey] != "" {
			args = args[:d]
		}
		if len(args) < min || max >= 0 && len(args) > max {
			return &usageError{msg: c.Name() + ": wrong number of arguments", usage: true}
		}
		return nil
	}
}

// flagError words what pflag refused as the CLI always has: "unknown flag
// --gracee — did you mean "--grace"?", "flag --listen needs a value",
// "invalid value "x" for flag --grace: want a whole number".
func flagError(c *cobra.Command, err error) error {
	msg := err.Error()
	var (
		notExist *pflag.NotExistError
		noValue  *pflag.ValueRequiredError
		invalid  *pflag.InvalidValueError
	)
	switch {
	case errors.As(err, &notExist):
		name := notExist.GetSpecifiedName()
		group := notExist.GetSpecifiedShortnames()
		// A group of one-letter flags from the one not known on: "-x", or
		// "-force" (Go's flag package took it for --force).
		group, _, _ = strings.Cut(group, "=")
		switch {
		case group == "":
			msg = "unknown flag --" + name + didYouMean(name, flagNames(c), "--")
		case len(group) > 1:
			msg = "unknown flag -" + group + didYouMean(group, flagNames(c), "--")
		default:
			msg = "unknown flag -" + name
		}
	case errors.As(err, &noValue):
		msg = fmt.Sprintf("flag %s needs a value", flagText(noValue.GetFlag()))
	case errors.As(err, &invalid):
		why := errors.Unwrap(invalid)
		if invalid.GetFlag().NoOptDefVal == "true" {
			why = errors.New("want true or false")
		}
		msg = fmt.Sprintf("invalid value %q for flag %s: %v", invalid.GetValue(), flagText(invalid.GetFlag()), why)
	}
	ue := &usageError{msg: msg, usage: true}
	if !c.HasParent() {
		ue.hint = "Run 'shepherd help' for the commands and flags."
	}
	return ue
}

// flagText is a flag as it is typed: -n, --grace.
func flagText(f *pflag.Flag) string {
	if len(f.Name) == 1 {
		return "-" + f.Name
	}
	return "--" + f.Name
}

// flagNames are the names of every flag c takes, its own and the global
// ones.
func flagNames(c *cobra.Command) []string {
	var names []string
	add := func(f *pflag.Flag) {
		if !f.Hidden && !slices.Contains(names, f.Name) {
			names = append(names, f.Name)
		}
	}
	c.Flags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	return names
}

// restKey annotates a verb whose arguments end with a command line of its
// own (create's CMD [ARGS…]); its value is how many arguments come before
// that command line.
const restKey = "shepherd:rest"

// markTail puts "--" where the command line of a restKey verb starts when
// it was not typed, so that the flags in it stay its own:
// `create P A sleep --force 9` is `create P A -- sleep --force 9`. The
// verb's own flags may come anywhere before it. pflag finds the boundary:
// its flags are parsed, without interspersed arguments, into values that
// keep nothing, one argument at a time. A command line pflag refuses is
// left as it is, for cobra to refuse.
func markTail(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil || !cmd.HasParent() {
		return args
	}
	before, err := strconv.Atoi(cmd.Annotations[restKey])
	if err != nil {
		return args
	}
	depth := 0 // the verb's own words: they are arguments to pflag
	for c := cmd; c.HasParent(); c = c.Parent() {
		depth++
	}
	fs := pflag.NewFlagSet(cmd.Name(), pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetInterspersed(false)
	fs.SetNormalizeFunc(cmd.Flags().GetNormalizeFunc())
	copyFlag := func(f *pflag.Flag) {
		if fs.Lookup(f.Name) == nil {
			fs.AddFlag(&pflag.Flag{Name: f.Name, Shorthand: f.Shorthand, NoOptDefVal: f.NoOptDefVal, Value: sink{}})
		}
	}
	cmd.Flags().VisitAll(copyFlag)
	cmd.InheritedFlags().VisitAll(copyFlag)
	rest := args
	for seen := 0; ; seen++ {
		if fs.Parse(rest) != nil || fs.ArgsLenAtDash() >= 0 {
			return args // refused, or "--" typed
		}
		rest = fs.Args()
		if len(rest) == 0 {
			return args
		}
		if seen == depth+before {
			at := len(args) - len(rest)
			return slices.Concat(args[:at], []string{"--"}, rest)
		}
		rest = rest[1:]
	}
}

// sink is a flag value that keeps nothing (markTail's).
type sink struct{}

func (sink) String() string   { return "" }
func (sink) Set(string) error { return nil }
func (sink) Type() string     { return "string" }
