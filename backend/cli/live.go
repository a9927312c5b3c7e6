package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"shepherd/backend/api"
	"shepherd/backend/termsafe"
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// livePs is `shepherd ps` on a terminal: the dashboard redrawn every two
// seconds, like pm2 monit's list, until q (or Ctrl-C). Being open, it keeps
// the engine sampling CPU and memory.
func (e *env) livePs() error {
	quit := make(chan struct{})
	if fd := int(os.Stdin.Fd()); term.IsTerminal(fd) {
		if old, err := term.MakeRaw(fd); err == nil {
			defer term.Restore(fd, old)
			go func() {
				b := make([]byte, 1)
				for {
					if n, err := os.Stdin.Read(b); err != nil || n == 1 && (b[0] == 'q' || b[0] == 'Q' || b[0] == 3) {
						close(quit)
						return
					}
				}
			}()
		}
	}
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		var out bytes.Buffer
		got, _, err := call(e, api.ListProcesses, api.StatsIn{Stats: true})
		if err != nil {
			return err
		}
		recs := got.Body
		sub := *e
		sub.cols = e.width() // the terminal's, read at each frame (it may be resized)
		sub.stdout = &out
		if err := sub.psTable(recs); err != nil {
			return err
		}
		// Home, clear, the table (raw mode: \r\n line ends), the key. The
		// table holds what agents named themselves: escaped, unless --raw.
		table := out.Bytes()
		if !e.raw {
			table = termsafe.Escape(table)
		}
		frame := bytes.ReplaceAll(table, []byte("\n"), []byte("\r\n"))
		fmt.Fprintf(e.term, "\x1b[H\x1b[2J%s\r\n%s  —  q quits\r\n", frame, time.Now().Format("15:04:05"))
		select {
		case <-quit:
			return nil
		case <-e.ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
