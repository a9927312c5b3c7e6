package sandbox

import (
	"fmt"
	"strings"
)

// SeatbeltProfile is the macOS sandbox profile (sandbox-exec's SBPL) for g:
// everything allowed but file writes outside the granted folders, the log
// and the usual devices, and — without @network — the network.
func SeatbeltProfile(g Grants, logPath string) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(allow default)\n")
	b.WriteString("(deny file-write*)\n")
	b.WriteString("(allow file-write*\n")
	for _, dev := range WritableDevices {
		fmt.Fprintf(&b, "  (literal %s)\n", sbplString(dev))
	}
	if logPath != "" {
		fmt.Fprintf(&b, "  (literal %s)\n", sbplString(logPath))
	}
	for _, d := range g.WriteDirs {
		fmt.Fprintf(&b, "  (subpath %s)\n", sbplString(d))
	}
	b.WriteString(")\n")
	if !g.Network {
		b.WriteString("(deny network*)\n")
		// Unix sockets are files on macOS and stay as the file rules say;
		// the log and the devices are not sockets.
	}
	return b.String()
}

// WritableDevices are written by many programs without writing data
// anywhere (">/dev/null"); every sandbox allows them.
var WritableDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}

// sbplString quotes s as an SBPL string literal.
func sbplString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
