// Command shepherd-shim is the per-agent parent process the engine starts;
// see package shim.
package main

import (
	"io"
	"os"
	"runtime"
	"syscall"

	"shepherd/backend/shim"
)

// inherited returns descriptor fd if the shim was given it, marked
// close-on-exec: the agent must not hold the engine's pipes open.
func inherited(fd uintptr, name string) *os.File {
	var st syscall.Stat_t
	if syscall.Fstat(int(fd), &st) != nil {
		return nil
	}
	syscall.CloseOnExec(int(fd))
	return os.NewFile(fd, name)
}

// pipe is inherited for a pipe, made non-blocking: a read or write that
// waits then parks a goroutine in the runtime's poller rather than holding
// a thread of its own.
func pipe(fd uintptr, name string) *os.File {
	var st syscall.Stat_t
	if syscall.Fstat(int(fd), &st) != nil {
		return nil
	}
	syscall.CloseOnExec(int(fd))
	if st.Mode&syscall.S_IFMT == syscall.S_IFIFO {
		_ = syscall.SetNonblock(int(fd), true)
	}
	return os.NewFile(fd, name)
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
	// One agent's helper has little to run at once: one P keeps the
	// runtime's per-P caches, and the threads it starts, to one set (about
	// 0.2 MiB less per agent). The engine sets GOMAXPROCS=1 in the shim's
	// environment too (shim.RuntimeEnv), which does it from the first
	// instruction; a GOMAXPROCS the user set is the agent's.
	runtime.GOMAXPROCS(1)
	if len(os.Args) > 1 && os.Args[1] == shim.SpawnerFlag {
		conn := inherited(3, "spawner")
		if conn == nil {
			os.Exit(2)
		}
		os.Exit(shim.Spawner(conn))
	}
	// The engine passes the status pipe as descriptor 3; started by hand,
	// there is none and the shim only writes its files.
	status := pipe(shim.StatusFD, "status")
	os.Exit(shim.Main(os.Args[1:], writer(status), func() io.ReadCloser { return reader(pipe(shim.GoFD, "go-ahead")) }))
}
