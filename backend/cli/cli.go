// Package cli is the `shepherd <verb>` command line. Every verb but serve
// talks to the running engine (the desktop app or `shepherd serve`) through
// its HTTP API, found through engine.json in the XDG runtime folder.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"

	"golang.org/x/sys/unix"

	"shepherd/backend/api"
	"shepherd/backend/paths"
	"shepherd/backend/presets"
	"shepherd/backend/termsafe"
)

// Version is reported by GET /v1/engine; set at build time with
// -ldflags "-X shepherd/backend/cli.Version=…".
var Version = "dev"

// Exit codes.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// errNoEngine is the one answer for "there is nothing to talk to".
var errNoEngine = errors.New("no engine running — start the app or `shepherd serve`")

// Run runs the CLI with args (os.Args[1:]) and returns the process exit code.
// Ctrl-C, SIGTERM or SIGHUP (the terminal closed, logout) cancels what the
// verb is doing (and ends serve cleanly).
func Run(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	return Main(ctx, args, os.Stdout, os.Stderr)
}

// Main is Run with its context and output streams given, for tests and
// embedding.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	e := &env{ctx: ctx, stdout: stdout, stderr: stderr}
	// Global flags before the verb.
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch strings.TrimLeft(args[0], "-") {
		case "json":
			e.json = true
		case "show-secrets":
			e.reveal = true
		case "raw":
			e.raw = true
		case "h", "help":
			printUsage(stdout)
			return ExitOK
		case "version":
			fmt.Fprintln(stdout, "shepherd", Version)
			return ExitOK
		default:
			fmt.Fprintf(stderr, "shepherd: unknown flag %s%s\nRun 'shepherd help' for the commands and flags.\n",
				args[0], didYouMean(strings.TrimLeft(args[0], "-"), []string{"json", "show-secrets", "raw", "help", "version"}, "--"))
			return ExitUsage
		}
		args = args[1:]
	}
	if len(args) == 0 {
		printUsage(stderr)
		return ExitUsage
	}
	name, args := args[0], args[1:]
	cmd := lookup(name)
	if cmd == nil {
		names := make([]string, len(commands))
		for i, c := range commands {
			names[i] = c.name
		}
		fmt.Fprintf(stderr, "shepherd: unknown command %q%s\nRun 'shepherd help' for the list of commands.\n", name, didYouMean(name, names, ""))
		return ExitUsage
	}

	fs, run := flagsFor(cmd, e)
	pos, tail, err := parseArgs(fs, args, cmd.maxPos, cmd.rest)
	if err == nil && (len(pos) < cmd.minPos || (cmd.maxPos >= 0 && len(pos) > cmd.maxPos)) {
		err = usagef("%s: wrong number of arguments", cmd.name)
	}
	if err == nil && cmd.rest && !cmd.restOptional && len(tail) == 0 {
		err = usagef("%s: the command to run is missing (put it after --)", cmd.name)
	}
	switch {
	case errors.Is(err, errHelp):
		printCommandUsage(stdout, cmd, fs)
		return ExitOK
	case err != nil:
		fmt.Fprintf(stderr, "shepherd: %v\n\n", err)
		printCommandUsage(stderr, cmd, fs)
		return ExitUsage
	}
	e.term = stdout
	if !e.raw && cmd.name != "serve" && cmd.name != "mcp" {
		// Agent text is inert on a terminal (termsafe): what a verb prints
		// there — logs, events, names, errors an agent wrote — has its
		// control sequences shown, not acted on. --raw keeps them; a pipe
		// or a file gets the bytes as they are.
		if isTerminal(stdout) {
			w := termsafe.New(stdout)
			defer w.Flush()
			e.stdout = w
		}
		if isTerminal(stderr) {
			w := termsafe.New(stderr)
			defer w.Flush()
			e.stderr, stderr = w, w
		}
	}
	if err := run(e, pos, tail); err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "shepherd: %v\n", err)
			return ExitUsage
		}
		fmt.Fprintln(stderr, errorText(err))
		return ExitError
	}
	return ExitOK
}

// errorText is what stderr gets: the engine's message in the window's words
// ("Agent 'x' not found"; the API keeps seed 000's "Process …"), otherwise
// the error.
func errorText(err error) string {
	var ae *api.Error
	if errors.As(err, &ae) {
		return agentWords.Replace(ae.Message)
	}
	if errors.Is(err, context.Canceled) {
		return "interrupted"
	}
	return err.Error()
}

// env is what a verb runs with.
type env struct {
	ctx            context.Context
	stdout, stderr io.Writer
	json           bool
	reveal         bool // --show-secrets: environment values as they are
	raw            bool // --raw: agent text's control sequences as they are, even on a terminal
	wide           bool // --wide: tables with every column, whole
	cols           int  // the width tables fit (0: the terminal's, see termWidth)
	// term is stdout itself, for the CLI's own control sequences (the live
	// dashboard's redraw); stdout escapes agent text on a terminal.
	term   io.Writer
	client *api.Client
}

// connect finds the running engine: inside an agent Shepherd started,
// with that agent's own credential (and only it); otherwise through
// engine.json. A missing or unreadable file, or one left by an engine that
// is gone, means no engine.
func (e *env) connect() (*api.Client, error) {
	if e.client != nil {
		return e.client, nil
	}
	info, asAgent, err := api.DiscoverEngine(paths.Default().EngineFile())
	if asAgent {
		if err != nil {
			return nil, err
		}
		e.client = api.NewClient(info)
		return e.client, nil
	}
	if err != nil {
		return nil, errNoEngine
	}
	if info.PID > 0 && unix.Kill(info.PID, 0) == unix.ESRCH {
		return nil, errNoEngine
	}
	e.client = api.NewClient(info)
	return e.client, nil
}

// call sends one operation and maps "could not reach it" to errNoEngine;
// it returns the answer decoded and as it came.
func call[I, O any](e *env, op *api.Op[I, O], in I, opts ...api.CallOption) (*O, []byte, error) {
	c, err := e.connect()
	if err != nil {
		return nil, nil, err
	}
	out, raw, err := api.CallRaw(e.ctx, c, op, in, opts...)
	if errors.Is(err, api.ErrUnreachable) {
		return nil, nil, errNoEngine
	}
	return out, raw, err
}

// fetch is call for commands that print a human answer: with --json it
// prints the raw answer itself and returns human=false, as it does on
// error; --show-secrets asks for secret values as they are.
func fetch[I, O any](e *env, op *api.Op[I, O], in I) (out *O, human bool, err error) {
	out, raw, err := call(e, op, in, api.Reveal(e.reveal))
	if err != nil {
		return nil, false, err
	}
	if e.json {
		e.printRaw(raw)
		return out, false, nil
	}
	return out, true, nil
}

// printRaw writes the API's JSON answer as is (with a final newline).
func (e *env) printRaw(raw []byte) {
	e.stdout.Write(raw)
	if len(raw) == 0 || raw[len(raw)-1] != '\n' {
		io.WriteString(e.stdout, "\n")
	}
}

func (e *env) table() *tabwriter.Writer {
	return tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
}

// command is one verb.
type command struct {
	name    string
	args    string // synopsis after the verb
	summary string
	minPos  int
	maxPos  int  // -1: any number
	rest    bool // the agent's command line follows the positionals
	// restOptional: the verb checks itself whether it needs that command
	// line (create with --preset needs none).
	restOptional bool
	run          func(e *env, pos, tail []string) error
	// setup declares the verb's flags and returns its run function, which
	// sees the parsed values through its closure.
	setup func(fs *flag.FlagSet) func(e *env, pos, tail []string) error
}

var commands []*command

// flagsFor declares cmd's flags (and the global --json, bound to e) and
// returns its run function.
func flagsFor(cmd *command, e *env) (*flag.FlagSet, func(e *env, pos, tail []string) error) {
	fs := newFlagSet(cmd.name)
	fs.BoolVar(&e.json, "json", e.json, "print the API's raw JSON instead of a table")
	fs.BoolVar(&e.reveal, "show-secrets", e.reveal, "print secret environment values (…KEY, …TOKEN, …) instead of masking them")
	fs.BoolVar(&e.raw, "raw", e.raw, "print what agents wrote as it is, control sequences included, even on a terminal (they are shown escaped there by default)")
	if cmd.setup != nil {
		return fs, cmd.setup(fs)
	}
	return fs, cmd.run
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// helpWidth is the width every help text fits in (a terminal's 80 columns).
const helpWidth = 80

func printUsage(w io.Writer) {
	fmt.Fprint(w, `Shepherd supervises long-running AI coding agents as durable processes.

Usage: shepherd <command> [arguments] [--json]

Commands:
`)
	col := 0
	for _, c := range commands {
		col = max(col, len(c.name))
	}
	col += 4 // two spaces before, two after
	for _, c := range commands {
		for i, l := range wrap(c.summary, helpWidth-col) {
			if i == 0 {
				fmt.Fprintf(w, "  %-*s%s\n", col-2, c.name, l)
			} else {
				fmt.Fprintf(w, "%*s%s\n", col, "", l)
			}
		}
	}
	fmt.Fprint(w, `
P is a project's id, name or path; A is an agent's id. --json prints the
API's raw JSON (for scripts). On a terminal, control sequences in what
agents wrote are shown escaped (\x1b…); --raw prints them as they are.
Exit codes: 0 done, 1 failed, 2 bad usage.
Run 'shepherd help <command>' for a command's arguments and flags.
`)
}

func printCommandUsage(w io.Writer, c *command, fs *flag.FlagSet) {
	// Alternative forms ("A  |  B") each get a line of their own.
	for i, form := range strings.Split(c.args, "  |  ") {
		lead := "Usage: "
		if i > 0 {
			lead = "       "
		}
		head := lead + "shepherd " + c.name + " "
		for j, l := range wrapUsage(form, helpWidth-len(head)) {
			if j == 0 {
				fmt.Fprintf(w, "%s%s\n", head, l)
			} else {
				fmt.Fprintf(w, "%*s%s\n", len(head)+2, "", l)
			}
		}
	}
	fmt.Fprintln(w)
	for _, l := range wrap(c.summary, helpWidth) {
		fmt.Fprintln(w, l)
	}
	type flagHelp struct{ name, usage string }
	var flags []flagHelp
	fs.VisitAll(func(f *flag.Flag) {
		arg := ""
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !bf.IsBoolFlag() {
			arg = " " + flagArgName(f.Name)
		}
		prefix := "--"
		if len(f.Name) == 1 {
			prefix = "-"
		}
		flags = append(flags, flagHelp{prefix + f.Name + arg, f.Usage})
	})
	sort.Slice(flags, func(i, j int) bool { return flags[i].name < flags[j].name })
	if len(flags) == 0 {
		return
	}
	fmt.Fprintln(w, "\nFlags:")
	const col = 26 // a flag's words start here, or on the next line when the flag is longer
	for _, f := range flags {
		lines := wrap(f.usage, helpWidth-col)
		if len(f.name)+4 > col {
			fmt.Fprintf(w, "  %s\n", f.name)
		} else {
			fmt.Fprintf(w, "  %-*s%s\n", col-2, f.name, lines[0])
			lines = lines[1:]
		}
		for _, l := range lines {
			fmt.Fprintf(w, "%*s%s\n", col, "", l)
		}
	}
}

// wrapUsage wraps a usage line without breaking inside brackets
// ("[-- OPTIONS…]" stays whole).
func wrapUsage(form string, width int) []string {
	var groups []string
	depth := 0
	for _, w := range strings.Fields(form) {
		if depth > 0 && len(groups) > 0 {
			groups[len(groups)-1] += "\u00a0" + w
		} else {
			groups = append(groups, w)
		}
		depth += strings.Count(w, "[") + strings.Count(w, "(") - strings.Count(w, "]") - strings.Count(w, ")")
	}
	lines := wrapWords(groups, width)
	for i := range lines {
		lines[i] = strings.ReplaceAll(lines[i], "\u00a0", " ")
	}
	return lines
}

// wrap breaks text into lines of at most width runes, at spaces; a word
// longer than width gets a line of its own.
func wrap(text string, width int) []string { return wrapWords(strings.Fields(text), width) }

func wrapWords(words []string, width int) []string {
	var lines []string
	var cur []rune
	for _, word := range words {
		wr := []rune(word)
		switch {
		case len(cur) == 0:
			cur = wr
		case len(cur)+1+len(wr) <= width:
			cur = append(append(cur, ' '), wr...)
		default:
			lines = append(lines, string(cur))
			cur = wr
		}
	}
	if len(cur) > 0 || len(lines) == 0 {
		lines = append(lines, string(cur))
	}
	return lines
}

func flagArgName(name string) string {
	switch name {
	case "env":
		return "K=V"
	case "timeout", "grace":
		return "SEC"
	case "n":
		return "N"
	case "listen":
		return "ADDR"
	case "profile":
		return "generic|claude-stream-json|codex-json"
	case "preset":
		return strings.Join(presets.Names(), "|")
	case "stale-check":
		return "true|false"
	}
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// agentWords turns the engine's seed-000 wording into the window's.
var agentWords = strings.NewReplacer("Process '", "Agent '", "Process is running", "The agent is running",
	"start process '", "start agent '", "stop process '", "stop agent '")

// didYouMean suggests the closest of names to what was typed, if one is
// close: ` — did you mean "start"?`.
func didYouMean(typed string, names []string, prefix string) string {
	best, bestD := "", 3
	for _, n := range names {
		d := editDistance(strings.ToLower(typed), n)
		if strings.HasPrefix(n, strings.ToLower(typed)) && len(typed) >= 2 {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" — did you mean %q?", prefix+best)
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
