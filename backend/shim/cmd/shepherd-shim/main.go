// Command shepherd-shim is the per-agent parent process the engine starts;
// see package shim.
package main

import (
	"io"
	"os"
	"syscall"

	"shepherd/backend/shim"
)

// inherited returns descriptor fd if the shim was given it, marked
// close-on-exec: the agent must not hold the engine's pipes open.
func inherited(fd uintptr, name string) *os.File {
	f := os.NewFile(fd, name)
	if f == nil {
		return nil
	}
	if _, err := f.Stat(); err != nil {
		return nil
	}
	syscall.CloseOnExec(int(fd))
	return f
}

// writer and reader keep a nil *os.File from becoming a non-nil interface.
func writer(f *os.File) io.WriteCloser {
	if f == nil {
		return nil
	}
	return f
}

func reader(f *os.File) io.ReadCloser {
	if f == nil {
		return nil
	}
	return f
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == shim.SpawnerFlag {
		conn := inherited(3, "spawner")
		if conn == nil {
			os.Exit(2)
		}
		os.Exit(shim.Spawner(conn))
	}
	// The engine passes the status pipe as descriptor 3; started by hand,
	// there is none and the shim only writes its files.
	status := inherited(shim.StatusFD, "status")
	os.Exit(shim.Main(os.Args[1:], writer(status), func() io.ReadCloser { return reader(inherited(shim.GoFD, "go-ahead")) }))
}
