package cli

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"shepherd/backend/api"
)

// parsed is what one command line came to, the verbs' own work left out:
// the exit code and output, and whether a verb ran, with its arguments and
// every flag value set, in order.
type parsed struct {
	code           int
	stdout, stderr string
	ran            bool
	verb           string
	rest           bool // the verb takes a command line after its arguments
	pos, tail      []string
	sets           [][2]string
}

// setRecorder wraps a flag's value to record every value set.
type setRecorder struct {
	pflag.Value
	name string
	sets *[][2]string
}

func (r *setRecorder) Set(v string) error {
	*r.sets = append(*r.sets, [2]string{r.name, v})
	return r.Value.Set(v)
}

// parse runs a command line through the real command tree with each verb's
// work replaced by a record of what it was given. A completion it asks for
// finds no engine (one that is never there).
func parse(t testing.TB, args ...string) parsed {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{ctx: context.Background(), stdout: &out, stderr: &errb, term: &out,
		client: api.NewClient(api.EngineInfo{URL: "http://127.0.0.1:1", Token: "none"})}
	root := e.root()
	var p parsed
	record := func(f *pflag.Flag) {
		if _, ok := f.Value.(*setRecorder); !ok {
			f.Value = &setRecorder{Value: f.Value, name: f.Name, sets: &p.sets}
		}
	}
	root.PersistentFlags().VisitAll(record)
	for _, c := range root.Commands() {
		c.Flags().VisitAll(record)
		c.RunE = func(c *cobra.Command, args []string) error {
			p.ran, p.verb, p.pos, p.rest = true, c.Name(), args, c.Annotations[restKey] != ""
			if d := c.ArgsLenAtDash(); d >= 0 && p.rest {
				p.pos, p.tail = args[:d], args[d:]
			}
			return nil
		}
	}
	p.code = e.execute(root, args)
	p.stdout, p.stderr = out.String(), errb.String()
	return p
}

// FuzzParseArgs runs arbitrary command lines through the command tree
// (cobra and pflag, markTail's split of create's command line, the CLI's
// wording of what they refuse). The input is a command line joined by NUL
// bytes (which no argument can hold): the verb, then its arguments. A
// refusal is a usage error with a message; an acceptance runs a verb (or
// prints help or the version) and accounts for the arguments: the
// positionals come from them in order, the agent's command line is their
// end as typed, each flag value is one of them, part of one, or a bool's
// "true"; and the same verb, positionals, command line and flag values come
// again from the plainest command line that says them. Seeds are in
// testdata/fuzz/FuzzParseArgs.
func FuzzParseArgs(f *testing.F) {
	f.Fuzz(func(t *testing.T, line string) {
		verb, joined, _ := strings.Cut(line, "\x00")
		in := []string{verb}
		if joined != "" {
			in = append(in, strings.Split(joined, "\x00")...)
		}
		given := slices.Clone(in)
		p := parse(t, in...)
		if !slices.Equal(in, given) {
			t.Fatalf("the command line %q changed to %q", given, in)
		}
		switch {
		case p.code == ExitUsage:
			if !strings.HasPrefix(p.stderr, "shepherd: ") && !strings.HasPrefix(p.stderr, "Shepherd supervises") {
				t.Fatalf("%q: usage error without a message: %q", in, p.stderr)
			}
			return
		case p.code != ExitOK:
			t.Fatalf("%q: exit %d with no verb run: %s", in, p.code, p.stderr)
		case !p.ran:
			if p.stdout == "" {
				t.Fatalf("%q: exit 0, nothing run, nothing printed", in)
			}
			return
		}

		at := slices.Index(in, p.verb)
		if at < 0 {
			t.Fatalf("%q: ran %s, which is not in it", in, p.verb)
		}
		end := len(in)
		if p.tail != nil {
			end -= len(p.tail)
			if end < at || !slices.Equal(in[end:], p.tail) {
				t.Fatalf("%q: the command line %q is not its end", in, p.tail)
			}
		}
		// (cobra finds the verb past empty arguments, which stay positionals)
		if !subsequence(p.pos, slices.Concat(in[:at], in[at+1:end])) {
			t.Fatalf("%q: positionals %q do not come from it in order", in, p.pos)
		}
		for _, s := range p.sets {
			if s[1] != "true" && !slices.ContainsFunc(in, func(a string) bool {
				return a == s[1] || strings.HasPrefix(a, "-") && strings.HasSuffix(a, s[1])
			}) {
				t.Fatalf("%q: --%s set to %q, which it does not hold", in, s[0], s[1])
			}
		}

		plain := []string{p.verb}
		for _, s := range p.sets {
			plain = append(plain, "--"+s[0]+"="+s[1])
		}
		switch {
		case !p.rest:
			plain = append(append(plain, "--"), p.pos...)
		case p.tail != nil:
			plain = append(append(append(plain, p.pos...), "--"), p.tail...)
		default:
			plain = append(plain, p.pos...)
		}
		q := parse(t, plain...)
		if !q.ran || q.verb != p.verb || !slices.Equal(q.pos, p.pos) || !slices.Equal(q.tail, p.tail) || !slices.Equal(q.sets, p.sets) {
			t.Fatalf("%q came to %s %q %q %q; said plainly, %q comes to exit %d %s %q %q %q\n%s",
				in, p.verb, p.pos, p.tail, p.sets, plain, q.code, q.verb, q.pos, q.tail, q.sets, q.stderr)
		}
	})
}

// subsequence reports whether sub's elements appear in all in order.
func subsequence(sub, all []string) bool {
	for _, s := range sub {
		i := slices.Index(all, s)
		if i < 0 {
			return false
		}
		all = all[i+1:]
	}
	return true
}
