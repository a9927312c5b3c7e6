//go:build !linux

package logrotate

import (
	"os"

	"golang.org/x/sys/unix"
)

// dupStderr makes f the process's stderr (descriptor 2).
func dupStderr(f *os.File) error { return unix.Dup2(int(f.Fd()), 2) }
