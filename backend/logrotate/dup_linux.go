package logrotate

import (
	"os"

	"golang.org/x/sys/unix"
)

// dupStderr makes f the process's stderr (descriptor 2).
func dupStderr(f *os.File) error { return unix.Dup3(int(f.Fd()), 2, 0) }
