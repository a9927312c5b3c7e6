package shim

import (
	"encoding/json"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"shepherd/backend/sandbox/jail"
)

// Spawner serves the engine's requests on conn (see SpawnerFlag) until the
// engine closes it, and returns the process's exit code.
func Spawner(conn *os.File) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "shepherd-shim: spawner:", err)
		return 1
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "shepherd-shim: spawner:", err)
		return 1
	}
	fd := int(conn.Fd())
	buf := make([]byte, 1<<20)
	oob := make([]byte, unix.CmsgSpace(8*4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return 0 // the engine is gone
		}
		fds := receivedFDs(oob[:oobn])
		reply := spawnOne(self, null, buf[:n], fds)
		for _, f := range fds {
			unix.Close(f)
		}
		b, _ := json.Marshal(reply)
		if err := unix.Sendmsg(fd, b, nil, nil, 0); err != nil {
			return 0
		}
	}
}

func receivedFDs(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if f, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, f...)
		}
	}
	return fds
}

// spawnOne starts the shim a request asks for.
func spawnOne(self string, null *os.File, msg []byte, fds []int) SpawnReply {
	var req SpawnRequest
	if err := json.Unmarshal(msg, &req); err != nil {
		return SpawnReply{Error: fmt.Sprintf("a spawn request that is not JSON: %v", err)}
	}
	want := 3
	if req.Cgroup {
		want = 4
	}
	if len(fds) != want || len(req.Argv) == 0 {
		return SpawnReply{Error: fmt.Sprintf("a spawn request needs a command line and %d descriptors (got %d)", want, len(fds))}
	}
	attr := jail.ShimAttr(req.Network)
	attr.Cloneflags |= syscall.CLONE_PARENT // the engine's child, as if it had started it
	if req.Cgroup {
		attr.UseCgroupFD, attr.CgroupFD = true, fds[3] // born in the box's cgroup
	}
	pid, err := syscall.ForkExec(self, req.Argv, &syscall.ProcAttr{
		Dir:   req.Dir,
		Env:   req.Env,
		Files: []uintptr{null.Fd(), null.Fd(), uintptr(fds[0]), uintptr(fds[1]), uintptr(fds[2])},
		Sys:   attr,
	})
	if err != nil {
		return SpawnReply{Error: err.Error()}
	}
	return SpawnReply{PID: pid}
}
