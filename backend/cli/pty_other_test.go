//go:build !linux

package cli

import (
	"os"
	"testing"
)

// pty: the tests that write to a terminal open one on Linux only.
type pty struct{ tty *os.File }

func openPTY(t *testing.T) *pty {
	t.Skip("pseudo-terminals are opened on Linux only in these tests")
	return nil
}

func (p *pty) output() string { return "" }
