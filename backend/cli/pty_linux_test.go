package cli

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// pty is a pseudo-terminal: what the CLI writes to its terminal end (tty,
// a terminal to isTerminal) is read back from its master end.
type pty struct {
	tty  *os.File
	mu   sync.Mutex
	out  []byte
	done chan struct{}
}

// openPTY opens a pseudo-terminal in raw mode (no \n → \r\n), whose output
// is collected until close.
func openPTY(t *testing.T) *pty {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("cannot open the terminal end: %v", err)
	}
	if _, err := term.MakeRaw(int(tty.Fd())); err != nil {
		t.Fatal(err)
	}
	p := &pty{tty: tty, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		b := make([]byte, 4096)
		for {
			n, err := m.Read(b)
			p.mu.Lock()
			p.out = append(p.out, b[:n]...)
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { p.tty.Close(); m.Close() })
	return p
}

// output closes the terminal end and returns what was written to it.
func (p *pty) output() string {
	p.tty.Close()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return string(p.out)
}
