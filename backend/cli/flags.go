package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// usageError is a mistake in the command line: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// errHelp asks for the verb's help text (exit code 0).
var errHelp = errors.New("help requested")

// parseArgs parses flags anywhere among the positional arguments (unlike the
// flag package, which stops at the first positional), so that
// `shepherd ls P --json` works. With rest set, the first argument after
// maxPos positionals, or everything after "--", is returned as tail
// untouched: it is the agent's own command line.
func parseArgs(fs *flag.FlagSet, args []string, maxPos int, rest bool) (pos, tail []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if rest {
				return pos, args[i+1:], nil
			}
			pos = append(pos, args[i+1:]...)
			return pos, nil, nil
		}
		if len(a) > 1 && a[0] == '-' {
			name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if name == "h" || name == "help" {
				return nil, nil, errHelp
			}
			f := fs.Lookup(name)
			if f == nil {
				var names []string
				fs.VisitAll(func(fl *flag.Flag) { names = append(names, fl.Name) })
				return nil, nil, usagef("unknown flag %s%s", a, didYouMean(name, names, "--"))
			}
			if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
				if !hasValue {
					value = "true"
				}
			} else if !hasValue {
				if i+1 >= len(args) {
					return nil, nil, usagef("flag --%s needs a value", name)
				}
				i++
				value = args[i]
			}
			if err := fs.Set(name, value); err != nil {
				return nil, nil, usagef("invalid value %q for flag --%s: %v", value, name, err)
			}
			continue
		}
		if rest && len(pos) == maxPos {
			return pos, args[i:], nil
		}
		pos = append(pos, a)
	}
	return pos, nil, nil
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// optBool is a true/false flag that remembers whether it was given.
type optBool struct{ v *bool }

func (o *optBool) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return strconv.FormatBool(*o.v)
}

func (o *optBool) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	o.v = &b
	return nil
}

// optInt is an integer flag that remembers whether it was given.
type optInt struct{ v *int }

func (o *optInt) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return strconv.Itoa(*o.v)
}

func (o *optInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want a whole number")
	}
	if n < 0 {
		return errors.New("must not be negative")
	}
	o.v = &n
	return nil
}

// nonNegInt is an integer flag that refuses negative values.
type nonNegInt int

func (n *nonNegInt) String() string { return strconv.Itoa(int(*n)) }
func (n *nonNegInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want a whole number")
	}
	if v < 0 {
		return errors.New("must not be negative")
	}
	*n = nonNegInt(v)
	return nil
}

// splitWords splits s like a POSIX shell splits words: blanks separate,
// single quotes keep everything, double quotes keep all but \" and \\, a
// backslash outside quotes escapes the next character.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
		case c == '\\':
			inWord = true
			if i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			}
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}
