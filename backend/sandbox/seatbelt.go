package sandbox

import (
	"fmt"
	"strings"
)

// SeatbeltProfile is the macOS sandbox profile (sandbox-exec's SBPL) for g:
// everything allowed but file writes (contents and metadata: mode, owner,
// times, xattrs, flags) outside the granted folders, the log and the usual
// devices; reads of Shepherd's own folders (hide); signals to processes
// outside the sandbox; SysV IPC; Unix sockets (but the system's name
// resolver, with @network); and — without @network — the network. The
// readOnly paths (Protection: git dirs and agent CLI configuration inside
// the grants) are denied writes after the grants allow them (SBPL: the
// last matching rule wins), the path itself included (no unlink, rename or
// replace).
//
// What Seatbelt cannot express, and so macOS does not enforce: a process
// namespace (a process that leaves the agent's process group outlives a
// stop) and dropping privileges (macOS has no capabilities; set-user-id
// programs keep working).
func SeatbeltProfile(g Grants, logPath string, hide, readOnly []string) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(allow default)\n")
	if len(hide) > 0 {
		b.WriteString("(deny file-read* file-write*\n")
		for _, d := range hide {
			fmt.Fprintf(&b, "  (subpath %s)\n", sbplString(d))
		}
		b.WriteString(")\n")
	}
	b.WriteString("(deny signal)\n(allow signal (target same-sandbox))\n")
	b.WriteString("(deny ipc-sysv*)\n")
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
	if len(readOnly) > 0 {
		b.WriteString("(deny file-write*\n")
		for _, p := range readOnly {
			fmt.Fprintf(&b, "  (subpath %s)\n", sbplString(p))
		}
		b.WriteString(")\n")
	}
	if !g.Network {
		b.WriteString("(deny network*)\n")
	} else {
		b.WriteString("(deny network-outbound (remote unix-socket))\n")
		b.WriteString("(allow network-outbound (remote unix-socket (path-literal \"/private/var/run/mDNSResponder\")))\n")
	}
	return b.String()
}

// WritableDevices are written by many programs without writing data
// anywhere (">/dev/null"); every sandbox allows them.
var WritableDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}

// BoxScratchDirs are writable inside a Linux sandbox: the box's own, empty
// at start and gone with it (shared memory, pseudo-terminals).
var BoxScratchDirs = []string{"/dev/shm", "/dev/pts"}

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
