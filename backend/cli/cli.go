// Package cli is the `shepherd <verb>` command line, on cobra (root.go
// builds the command tree; a file per area holds its verbs). Every verb but
// serve talks to the running engine (the desktop app or `shepherd serve`)
// through its HTTP API, found through engine.json in the XDG runtime folder
// (env.connect).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"shepherd/backend/api"
	"shepherd/backend/paths"
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
	e := &env{ctx: ctx, stdout: stdout, stderr: stderr, term: stdout}
	return e.execute(e.root(), args)
}

// execute runs the command line on root (built by e.root) and turns what
// came of it into an exit code, with the error on stderr: a command line
// cobra or a verb refused is a usage error (2), anything else a failure (1).
func (e *env) execute(root *cobra.Command, args []string) int {
	root.SetArgs(markTail(root, args))
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetContext(e.ctx)
	cmd, err := root.ExecuteC()
	defer func() {
		for _, flush := range e.flush {
			flush()
		}
	}()
	if err == nil {
		return ExitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		switch {
		case ue.msg == "": // said already
		case ue.hint != "":
			fmt.Fprintf(e.stderr, "shepherd: %s\n%s\n", ue.msg, ue.hint)
		case ue.usage && cmd != nil:
			fmt.Fprintf(e.stderr, "shepherd: %s\n\n", ue.msg)
			printCommandUsage(e.stderr, cmd)
		default:
			fmt.Fprintf(e.stderr, "shepherd: %s\n", ue.msg)
		}
		return ExitUsage
	}
	fmt.Fprintln(e.stderr, errorText(err))
	return ExitError
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

// env is what a verb runs with: the streams, the global flags (bound to
// the root's persistent flags) and the client, made in one place (connect).
type env struct {
	ctx            context.Context
	stdout, stderr io.Writer
	json           bool
	reveal         bool   // --show-secrets: environment values as they are
	host           string // --host: a host's engine, through the local one
	raw            bool   // --raw: agent text's control sequences as they are, even on a terminal
	wide           bool   // --wide: tables with every column, whole
	cols           int    // the width tables fit (0: the terminal's, see termWidth)
	// term is stdout itself, for the CLI's own control sequences (the live
	// dashboard's redraw); stdout escapes agent text on a terminal.
	term   io.Writer
	client *api.Client
	flush  []func() // what execute flushes at the end (the escaping writers)
}

// terminal is stdout as it was given (e.term), which may be a terminal:
// e.stdout is the writer that escapes agent text on it.
func (e *env) terminal() io.Writer {
	if e.term != nil {
		return e.term
	}
	return e.stdout
}

// connect finds the running engine: inside an agent Shepherd started,
// with that agent's own credential (and only it); otherwise through
// engine.json. A missing or unreadable file, or one left by an engine that
// is gone, means no engine. It is the one place the client is made: every
// verb and every completion goes through it (and the MCP server through
// discover), so a root flag that chooses the engine, bound to a field of
// env, reaches them all here.
func (e *env) connect() (*api.Client, error) {
	if e.client != nil {
		return e.client, nil
	}
	info, asAgent, err := e.discover()
	if asAgent {
		if err != nil {
			return nil, err
		}
		e.client = api.NewClient(info)
		if e.host != "" {
			e.client = e.client.OnHost(e.host) // which the engine refuses an agent
		}
		return e.client, nil
	}
	if err != nil {
		return nil, errNoEngine
	}
	if info.PID > 0 && unix.Kill(info.PID, 0) == unix.ESRCH {
		return nil, errNoEngine
	}
	e.client = api.NewClient(info)
	if e.host != "" {
		e.client = e.client.OnHost(e.host)
	}
	return e.client, nil
}

// discover says which engine the CLI talks to, and whether as an agent
// (with its credential); connect and the MCP server both ask it.
func (e *env) discover() (info api.EngineInfo, asAgent bool, err error) {
	return api.DiscoverEngine(paths.Default().EngineFile())
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
