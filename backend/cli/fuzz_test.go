package cli

import (
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"
)

// setRecorder wraps a flag's value to record every value parseArgs sets.
type setRecorder struct {
	flag.Value
	name string
	sets *[][2]string
}

func (r *setRecorder) Set(v string) error {
	*r.sets = append(*r.sets, [2]string{r.name, v})
	return r.Value.Set(v)
}

func (r *setRecorder) IsBoolFlag() bool {
	bf, ok := r.Value.(interface{ IsBoolFlag() bool })
	return ok && bf.IsBoolFlag()
}

// FuzzParseArgs runs parseArgs over arbitrary argument lists with the flags
// of each real command. The input is a command line joined by NUL bytes
// (which no argument can hold): the verb, then its arguments; an unknown
// verb picks a command by its length. A refusal is a usage
// error with a message (or the request for help); an acceptance accounts
// for every argument, in order: a flag set to its value (inline, implied
// for a bool, or the next argument), the "--" terminator, the next
// positional, or the start of the tail. Seeds are in
// testdata/fuzz/FuzzParseArgs.
func FuzzParseArgs(f *testing.F) {
	f.Fuzz(func(t *testing.T, line string) {
		name, joined, _ := strings.Cut(line, "\x00")
		cmd := lookup(name)
		if cmd == nil {
			cmd = commands[len(name)%len(commands)]
		}
		var args []string
		if joined != "" {
			args = strings.Split(joined, "\x00")
		}
		fs, _ := flagsFor(cmd, &env{})
		var sets [][2]string
		fs.VisitAll(func(fl *flag.Flag) {
			fl.Value = &setRecorder{Value: fl.Value, name: fl.Name, sets: &sets}
		})
		in := slices.Clone(args)

		pos, tail, err := parseArgs(fs, args, cmd.maxPos, cmd.rest)
		if !slices.Equal(in, args) {
			t.Fatalf("parseArgs changed its input %q to %q", in, args)
		}
		if err != nil {
			var ue *usageError
			switch {
			case pos != nil || tail != nil:
				t.Fatalf("%s %q: error %v with positionals %q and tail %q", cmd.name, args, err, pos, tail)
			case errors.Is(err, errHelp):
			case !errors.As(err, &ue) || ue.msg == "":
				t.Fatalf("%s %q: error %#v is not a usage error with a message", cmd.name, args, err)
			}
			return
		}
		if tail != nil && !cmd.rest {
			t.Fatalf("%s %q: a tail %q for a command without one", cmd.name, args, tail)
		}
		if cmd.rest && cmd.maxPos >= 0 && len(pos) > cmd.maxPos {
			t.Fatalf("%s %q: %d positionals, at most %d before the command line", cmd.name, args, len(pos), cmd.maxPos)
		}

		np, ns := 0, 0 // positionals and flag settings accounted for
		tailed := false
	walk:
		for i := 0; i < len(args); {
			a := args[i]
			switch {
			case a == "--":
				rest := args[i+1:]
				if cmd.rest {
					if !slices.Equal(tail, rest) {
						t.Fatalf("%s %q: tail %q, want what follows --: %q", cmd.name, args, tail, rest)
					}
				} else if !slices.Equal(pos[np:], rest) {
					t.Fatalf("%s %q: positionals %q end with %q, want what follows --: %q", cmd.name, args, pos, pos[np:], rest)
				} else {
					np = len(pos)
				}
				tailed = cmd.rest
				break walk
			case len(a) > 1 && a[0] == '-':
				name, value, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
				fl := fs.Lookup(name)
				if fl == nil {
					t.Fatalf("%s %q: accepted the unknown flag %q", cmd.name, args, a)
				}
				step := 1
				if !inline {
					if fl.Value.(*setRecorder).IsBoolFlag() {
						value = "true"
					} else if i+1 < len(args) {
						value, step = args[i+1], 2
					}
				}
				if ns >= len(sets) || sets[ns] != [2]string{name, value} {
					t.Fatalf("%s %q: argument %d (%q) should set --%s to %q; the settings were %q", cmd.name, args, i, a, name, value, sets)
				}
				ns++
				i += step
			case cmd.rest && np == cmd.maxPos:
				if !slices.Equal(tail, args[i:]) {
					t.Fatalf("%s %q: tail %q, want %q", cmd.name, args, tail, args[i:])
				}
				tailed = true
				break walk
			default:
				if np >= len(pos) || pos[np] != a {
					t.Fatalf("%s %q: argument %d (%q) should be positional %d; the positionals are %q", cmd.name, args, i, a, np, pos)
				}
				np++
				i++
			}
		}
		if np != len(pos) || ns != len(sets) || (!tailed && tail != nil) {
			t.Fatalf("%s %q: positionals %q, tail %q and settings %q do not all come from the arguments", cmd.name, args, pos, tail, sets)
		}
	})
}
