package cli

import (
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"
)

// Tables that fit the terminal, as `pm2 ls` and `systemctl` do: a row never
// wraps. The columns a table cannot hold are trimmed (with "…"), then the
// least useful are left out, one at a time, until the rest fits; `--wide`
// shows every column whole.

// defaultWidth is the width of output that is not a terminal (a pipe, a
// file): what a terminal has unless it was made wider.
const defaultWidth = 80

// colGap is the space between two columns.
const colGap = 2

// column is one column of a fitted table.
type column struct {
	head string
	// drop is the order in which columns are left out when the table is
	// too wide: 1 first, then 2, …; 0 never (the agent's id, its status).
	drop int
	// min is the width a column may be trimmed to (0: never trimmed).
	min int
	// keepEnd trims from the start ("…/agents/x/agent.log"): for paths.
	keepEnd bool
}

// termWidth is the width tables fit: $COLUMNS when set (as ls and systemctl
// honour it), else the terminal's, else 80.
func termWidth(w io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return defaultWidth
}

// fitTable writes rows (one cell per column) under their heads, within
// width; wide writes every column whole, whatever the width.
func fitTable(w io.Writer, cols []column, rows [][]string, width int, wide bool) error {
	natural := make([]int, len(cols))
	for i, c := range cols {
		natural[i] = runeLen(c.head)
		for _, r := range rows {
			natural[i] = max(natural[i], runeLen(r[i]))
		}
	}
	shown := make([]bool, len(cols))
	for i := range cols {
		shown[i] = true
	}
	widths := append([]int(nil), natural...)
	if !wide {
		widths = fitWidths(cols, natural, shown, width)
	}
	var b strings.Builder
	line := func(cells func(i int) string) {
		b.Reset()
		last := -1
		for i := range cols {
			if shown[i] && widths[i] > 0 {
				last = i
			}
		}
		first := true
		for i := range cols {
			if !shown[i] || widths[i] == 0 {
				continue
			}
			if !first {
				b.WriteString(strings.Repeat(" ", colGap))
			}
			first = false
			cell := trimCell(cells(i), widths[i], cols[i].keepEnd)
			b.WriteString(cell)
			if i != last {
				b.WriteString(strings.Repeat(" ", widths[i]-runeLen(cell)))
			}
		}
		b.WriteByte('\n')
	}
	line(func(i int) string { return cols[i].head })
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	for _, r := range rows {
		line(func(i int) string { return r[i] })
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// fitWidths chooses the columns' widths within width (0: left out; shown
// is updated too). First the trimmable columns give up room, the least
// useful first, down to their least widths; if that is not enough, the
// least useful column is left out and the rest tried again from their
// whole widths (so what stays is trimmed no more than it must be).
func fitWidths(cols []column, natural []int, shown []bool, width int) []int {
	for {
		widths := make([]int, len(cols))
		excess := -colGap - width
		for i := range cols {
			if shown[i] {
				widths[i] = natural[i]
				excess += natural[i] + colGap
			}
		}
		// What is never left out is trimmed only when nothing else is left
		// to leave out.
		droppable := false
		for i, c := range cols {
			droppable = droppable || shown[i] && c.drop > 0
		}
		for _, i := range byDrop(cols, shown) {
			if excess <= 0 || droppable && cols[i].drop == 0 {
				break
			}
			if c := cols[i]; c.min > 0 && widths[i] > c.min {
				take := min(widths[i]-c.min, excess)
				widths[i] -= take
				excess -= take
			}
		}
		if excess <= 0 {
			refill(cols, natural, shown, widths, -excess)
			return widths
		}
		dropped := false
		for _, i := range byDrop(cols, shown) {
			if cols[i].drop > 0 {
				shown[i], dropped = false, true
				break
			}
		}
		if !dropped {
			return widths // only what is never left out: it may still be wider than the terminal
		}
	}
}

// refill puts back, most useful first, columns that were left out but fit
// in the room left (slack): one left out before a wider one may fit once
// that one is out too.
func refill(cols []column, natural []int, shown []bool, widths []int, slack int) {
	order := byDrop(cols, allOf(len(cols)))
	for k := len(order) - 1; k >= 0; k-- {
		i := order[k]
		if shown[i] {
			continue
		}
		w := natural[i]
		if w+colGap > slack && cols[i].min > 0 {
			w = min(w, slack-colGap)
			if w < cols[i].min {
				continue
			}
		}
		if w+colGap <= slack {
			shown[i], widths[i] = true, w
			slack -= w + colGap
		}
	}
}

func allOf(n int) []bool {
	b := make([]bool, n)
	for i := range b {
		b[i] = true
	}
	return b
}

// byDrop lists the shown columns in the order they are left out (those
// never left out last, from the right).
func byDrop(cols []column, shown []bool) []int {
	var out []int
	for rank := 1; ; rank++ {
		found := false
		for i, c := range cols {
			if c.drop >= rank {
				found = true
			}
			if shown[i] && c.drop == rank {
				out = append(out, i)
			}
		}
		if !found {
			break
		}
	}
	for i := len(cols) - 1; i >= 0; i-- {
		if shown[i] && cols[i].drop == 0 {
			out = append(out, i)
		}
	}
	return out
}

// trimCell shortens s to width runes with an ellipsis: at its end, or at its
// start for keepEnd.
func trimCell(s string, width int, keepEnd bool) string {
	n := runeLen(s)
	if n <= width {
		return s
	}
	if width <= 1 {
		return "…"
	}
	r := []rune(s)
	if keepEnd {
		return "…" + string(r[n-width+1:])
	}
	return strings.TrimRight(string(r[:width-1]), " ") + "…"
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }
