package proc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"shepherd/backend/shim"
)

// spawner is the engine's end of the shim's spawner process (see
// shim.SpawnerFlag): started at the first sandboxed start, started again
// if it has gone, ended by Runner.Close.
type spawner struct {
	mu   sync.Mutex
	cmd  *exec.Cmd
	conn *os.File
}

// spawnBoxed starts a sandboxed agent's shim through the spawner, in the
// box's namespaces, as this process's child; files are its stderr, status
// pipe and go-ahead pipe, and with req.Cgroup the box's cgroup to start it
// in.
func (r *Runner) spawnBoxed(req shim.SpawnRequest, files []*os.File) (*os.Process, error) {
	s := &r.spawn
	s.mu.Lock()
	defer s.mu.Unlock()
	var pid int
	var err error
	for try := 0; try < 2; try++ {
		if s.conn == nil {
			if err = s.start(r.Shim); err != nil {
				return nil, err
			}
		}
		pid, err = s.ask(req, files)
		if err == nil || !errors.Is(err, errSpawnerGone) {
			break
		}
		s.stop() // gone (killed, or the thread that started it ended): once more with a new one
	}
	if err != nil {
		return nil, err
	}
	return os.FindProcess(pid)
}

var errSpawnerGone = errors.New("the shim spawner is gone")

func (s *spawner) start(shimPath string) error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("start the shim spawner: %w", err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "spawner"), os.NewFile(uintptr(fds[1]), "spawner")
	cmd := exec.Command(shimPath, shim.SpawnerFlag)
	cmd.Env, _ = shim.RuntimeEnv(os.Environ()) // nothing runs with the spawner's environment
	cmd.ExtraFiles = []*os.File{theirs}
	// Its own session (a terminal's Ctrl-C is not for it), and gone with
	// the engine.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		mine.Close()
		return fmt.Errorf("start the shim spawner %s: %w", shimPath, err)
	}
	s.cmd, s.conn = cmd, mine
	return nil
}

func (s *spawner) ask(req shim.SpawnRequest, files []*os.File) (int, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return 0, err
	}
	fd := int(s.conn.Fd())
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	rights := unix.UnixRights(fds...)
	if err := unix.Sendmsg(fd, b, rights, nil, 0); err != nil {
		return 0, fmt.Errorf("%w: %v", errSpawnerGone, err)
	}
	buf := make([]byte, 4096) // a reply is a pid or one error line
	for {
		n, _, _, _, err := unix.Recvmsg(fd, buf, nil, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return 0, fmt.Errorf("%w: %v", errSpawnerGone, err)
		}
		var rep shim.SpawnReply
		if err := json.Unmarshal(buf[:n], &rep); err != nil {
			return 0, fmt.Errorf("the shim spawner answered %q: %w", buf[:n], err)
		}
		if rep.Error != "" {
			return 0, errors.New(rep.Error)
		}
		if rep.PID <= 0 {
			return 0, fmt.Errorf("the shim spawner answered no pid")
		}
		return rep.PID, nil
	}
}

// stop ends the spawner: it exits when its socket closes.
func (s *spawner) stop() {
	if s.conn == nil {
		return
	}
	s.conn.Close()
	_ = s.cmd.Wait()
	s.conn, s.cmd = nil, nil
}

// Close ends what the runner started for itself (the shim spawner); the
// shims and agents it started live on.
func (r *Runner) Close() {
	r.spawn.mu.Lock()
	defer r.spawn.mu.Unlock()
	r.spawn.stop()
}
