package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"shepherd/backend/presets"
)

// Help as the CLI has always printed it, from the cobra commands: a verb's
// Use is its name and its synopsis (alternative forms separated by "  |  "),
// its Short the one-line summary; everything fits 80 columns.

// helpWidth is the width every help text fits in (a terminal's 80 columns).
const helpWidth = 80

// printUsage is `shepherd help`: every verb with its summary.
func printUsage(w io.Writer, root *cobra.Command) {
	fmt.Fprint(w, `Shepherd supervises long-running AI coding agents as durable processes.

Usage: shepherd <command> [arguments] [--json]

Commands:
`)
	var verbs []*cobra.Command
	col := 0
	for _, c := range root.Commands() {
		if !c.Hidden {
			verbs = append(verbs, c)
			col = max(col, len(c.Name()))
		}
	}
	col += 4 // two spaces before, two after
	for _, c := range verbs {
		for i, l := range wrap(c.Short, helpWidth-col) {
			if i == 0 {
				fmt.Fprintf(w, "  %-*s%s\n", col-2, c.Name(), l)
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

// synopsis is what follows the verb's name in its usage line.
func synopsis(c *cobra.Command) string {
	_, args, _ := strings.Cut(c.Use, " ")
	return args
}

// printCommandUsage is `shepherd help VERB` (and `shepherd VERB -h`).
func printCommandUsage(w io.Writer, c *cobra.Command) {
	// Alternative forms ("A  |  B") each get a line of their own.
	for i, form := range strings.Split(synopsis(c), "  |  ") {
		lead := "Usage: "
		if i > 0 {
			lead = "       "
		}
		head := lead + "shepherd " + c.Name() + " "
		for j, l := range wrapUsage(form, helpWidth-len(head)) {
			if j == 0 {
				fmt.Fprintf(w, "%s%s\n", head, l)
			} else {
				fmt.Fprintf(w, "%*s%s\n", len(head)+2, "", l)
			}
		}
	}
	fmt.Fprintln(w)
	for _, l := range wrap(c.Short, helpWidth) {
		fmt.Fprintln(w, l)
	}
	if c.Long != "" { // more, as it is written
		fmt.Fprintf(w, "\n%s\n", c.Long)
	}
	type flagHelp struct{ name, usage string }
	var flags []flagHelp
	seen := map[string]bool{}
	add := func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" || seen[f.Name] {
			return
		}
		seen[f.Name] = true
		arg := ""
		if f.NoOptDefVal == "" {
			arg = " " + flagArgName(f.Name)
		}
		name := "--" + f.Name
		switch {
		case len(f.Name) == 1:
			name = "-" + f.Name
		case f.Shorthand != "":
			name = "-" + f.Shorthand + ", " + name
		}
		flags = append(flags, flagHelp{name + arg, f.Usage})
	}
	c.LocalFlags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
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
		return strings.Join(profiles, "|")
	case "preset":
		return strings.Join(presets.Names(), "|")
	case "stale-check":
		return "true|false"
	}
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}
