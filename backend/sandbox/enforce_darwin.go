//go:build darwin

package sandbox

import (
	"fmt"
	"os"
)

// SandboxExec is macOS's Seatbelt runner.
const SandboxExec = "/usr/bin/sandbox-exec"

// Detect finds what this machine can enforce: sandbox-exec. probe is unused
// on macOS.
func Detect(probe []string) Support {
	s := Support{OS: "darwin"}
	if fi, err := os.Stat(SandboxExec); err != nil {
		s.SeatbeltError = fmt.Sprintf("%s: %v", SandboxExec, err)
	} else if fi.Mode()&0o111 == 0 {
		s.SeatbeltError = SandboxExec + " is not executable"
	} else {
		s.Seatbelt = true
	}
	return s
}

// Wrap returns the path and argv that run path with argv under g's Seatbelt
// profile, with the hide folders unreadable and the readOnly paths kept so.
func Wrap(g Grants, logPath string, hide, readOnly []string, path string, argv []string) (string, []string) {
	a := []string{"sandbox-exec", "-p", SeatbeltProfile(g, logPath, hide, readOnly), path}
	if len(argv) > 1 {
		a = append(a, argv[1:]...)
	}
	return SandboxExec, a
}

// BoxTmp is a sandboxed agent's TMPDIR: none: the agent keeps the TMPDIR it has (Seatbelt allows writes there only where granted).
const BoxTmp = ""
