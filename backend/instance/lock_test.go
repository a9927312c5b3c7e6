package instance

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSecondHolderRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "engine.lock")
	l, err := Acquire(p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(p)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second acquire: %v", err)
	}
	l.Release()
	l2, err := Acquire(p)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l2.Release()
}

func TestMain(m *testing.M) {
	if p := os.Getenv("SHEPHERD_LOCK_HOLDER"); p != "" {
		if _, err := Acquire(p); err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("locked\n")
		time.Sleep(time.Hour)
	}
	os.Exit(m.Run())
}

// The OS drops the lock of a holder that dies, even by SIGKILL.
func TestLockFreedWhenHolderDies(t *testing.T) {
	p := filepath.Join(t.TempDir(), "engine.lock")
	holder := exec.Command(os.Args[0], "-test.run=^$")
	holder.Env = append(os.Environ(), "SHEPHERD_LOCK_HOLDER="+p)
	out, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "locked\n" {
		holder.Process.Kill()
		t.Fatalf("holder said %q", line)
	}
	_, err := Acquire(p)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(holder.Process.Pid)) {
		t.Fatalf("while held by another process: %v", err)
	}
	holder.Process.Signal(syscall.SIGKILL)
	holder.Wait()
	l, err := Acquire(p)
	if err != nil {
		t.Fatalf("lock not freed after the holder was killed: %v", err)
	}
	l.Release()
}
