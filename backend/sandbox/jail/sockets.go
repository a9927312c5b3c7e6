package jail

import (
	"bufio"
	"io"
	"slices"
	"strings"
)

// ParseUnixSockets returns the pathname sockets listed in /proc/net/unix
// (whose last column is the bound path; abstract ones start with '@' and
// unnamed ones have none), each once, sorted.
func ParseUnixSockets(r io.Reader) []string {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			first = false
			if strings.HasPrefix(line, "Num") {
				continue
			}
		}
		f := strings.Fields(line)
		// Num RefCount Protocol Flags Type St Inode Path
		if len(f) < 8 {
			continue
		}
		p := strings.Join(f[7:], " ")
		if strings.HasPrefix(p, "/") {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
