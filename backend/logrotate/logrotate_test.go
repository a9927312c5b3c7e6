package logrotate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shepherd/backend/logtail"
)

// lines is n numbered lines, as an agent writes them.
func lines(from, n int) []byte {
	var b bytes.Buffer
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "line %04d\n", i)
	}
	return b.Bytes()
}

func size(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func TestRotationKeepsTheCapAndTheCount(t *testing.T) {
	p := filepath.Join(t.TempDir(), "agent.log")
	w, err := Open(p, 100, 2)
	if err != nil {
		t.Fatal(err)
	}
	all := lines(0, 100) // 1000 bytes
	for i := 0; i < len(all); i += 7 {
		if _, err := w.Write(all[i:min(i+7, len(all))]); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	for _, f := range []string{p, logtail.Rotated(p, 1), logtail.Rotated(p, 2)} {
		if s := size(t, f); s > 100 {
			t.Errorf("%s is %d bytes, over its cap of 100", f, s)
		}
	}
	if _, err := os.Stat(logtail.Rotated(p, 3)); err == nil {
		t.Error("a third older part is kept; keep is 2")
	}
	// Offsets count from the first byte ever.
	if got := logtail.Size(p); got != 1000 {
		t.Errorf("size %d, want 1000", got)
	}
	if got := logtail.Start(p); got != 700 {
		t.Errorf("start %d, want 700 (three files of 100 kept)", got)
	}
	c, err := logtail.Since(p, 750, 1<<20, false)
	if err != nil || c.Start != 750 || c.Next != 1000 || string(c.Data) != string(all[750:]) || c.Skipped || c.Reset {
		t.Errorf("since 750: %+v %v", c, err)
	}
	c, _ = logtail.Since(p, 100, 1<<20, false)
	if !c.Skipped || c.Start != 700 || string(c.Data) != string(all[700:]) {
		t.Errorf("since an offset rotated away: %+v", c)
	}
	last, off, err := logtail.Last(p, 250)
	if err != nil || off != 750 || string(last) != string(all[750:]) {
		t.Errorf("last 250: %d %q %v", off, last, err)
	}
	got, err := logtail.Lines(p, 25, 1<<20)
	if err != nil || string(got) != string(all[750:]) {
		t.Errorf("last 25 lines across parts: %q %v", got, err)
	}
	ls, next, err := logtail.Complete(p, 3, 1<<20)
	if err != nil || strings.Join(ls, ",") != "line 0097,line 0098,line 0099" || next != 1000 {
		t.Errorf("complete: %q %d %v", ls, next, err)
	}
}

func TestReopenedLogGoesOnFromItsOffset(t *testing.T) {
	p := filepath.Join(t.TempDir(), "agent.log")
	w, _ := Open(p, 50, 1)
	w.Write(lines(0, 12)) // 120 bytes: rotated twice
	w.Close()
	w, err := Open(p, 50, 1)
	if err != nil {
		t.Fatal(err)
	}
	if w.Offset() != 120 {
		t.Fatalf("reopened at %d, want 120", w.Offset())
	}
	w.Write(lines(12, 3))
	w.Close()
	if got := logtail.Size(p); got != 150 {
		t.Errorf("size %d, want 150", got)
	}
	// The log deleted by hand: a new one starts where the older part ends,
	// so offsets never go back.
	os.Remove(p)
	w, _ = Open(p, 50, 1)
	if w.Offset() != logtail.Start(p)+size(t, logtail.Rotated(p, 1)) {
		t.Errorf("a new file after a deleted one starts at %d", w.Offset())
	}
	w.Write([]byte("again\n"))
	w.Close()
	c, _ := logtail.Since(p, logtail.Size(p)-6, 100, false)
	if string(c.Data) != "again\n" {
		t.Errorf("read after restart: %+v", c)
	}
}

func TestKeepNoneTruncates(t *testing.T) {
	p := filepath.Join(t.TempDir(), "agent.log")
	w, _ := Open(p, 30, 0)
	w.Write(lines(0, 10))
	w.Close()
	if s := size(t, p); s > 30 {
		t.Errorf("%d bytes", s)
	}
	if m, _ := filepath.Glob(p + ".[0-9]*"); len(m) != 0 {
		t.Errorf("older parts kept with keep 0: %v", m)
	}
	if logtail.Size(p) != 100 {
		t.Errorf("size %d, want 100", logtail.Size(p))
	}
	c, _ := logtail.Since(p, 95, 100, false)
	if string(c.Data) != "0009\n" {
		t.Errorf("%+v", c)
	}
}

func TestLoweredKeepRemovesTheExtra(t *testing.T) {
	p := filepath.Join(t.TempDir(), "agent.log")
	w, _ := Open(p, 10, 5)
	w.Write(lines(0, 6))
	w.Close()
	if _, err := os.Stat(logtail.Rotated(p, 5)); err != nil {
		t.Fatal("five parts expected")
	}
	w, _ = Open(p, 10, 2)
	w.Write(lines(6, 1))
	w.Close()
	for k := 3; k <= 5; k++ {
		if _, err := os.Stat(logtail.Rotated(p, k)); err == nil {
			t.Errorf("part %d kept after keep was lowered to 2", k)
		}
	}
}

// A full disk: what cannot be written is dropped and counted, and said in
// the log once the disk takes writes again.
func TestFullDiskDropsAndSaysSo(t *testing.T) {
	p := filepath.Join(t.TempDir(), "agent.log")
	w, err := Open(p, 1<<20, 1)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("before\npartial"))
	real := w.f
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full here")
	}
	w.f = full
	for i := 0; i < 3; i++ {
		if n, err := w.Write([]byte("lost\n")); n != 0 || err == nil {
			t.Fatalf("a write to a full disk: %d %v", n, err)
		}
	}
	if w.Dropped() != 15 {
		t.Errorf("dropped %d, want 15", w.Dropped())
	}
	w.f = real
	full.Close()
	w.Write([]byte("after\n"))
	w.Close()
	b, _ := os.ReadFile(p)
	want := "before\npartial\n[shepherd] 15 bytes of output were dropped: write /dev/full: no space left on device\nafter\n"
	if string(b) != want {
		t.Errorf("log:\n%q\nwant\n%q", b, want)
	}
}

func TestAppendRotatesBetweenLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "events.jsonl")
	for i := 0; i < 30; i++ {
		if err := Append(p, lines(i, 1), 35, 2); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{p, logtail.Rotated(p, 1), logtail.Rotated(p, 2)} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 35 || len(b) == 0 || b[0] != 'l' || b[len(b)-1] != '\n' {
			t.Errorf("%s holds %q: not whole lines within the cap", f, b)
		}
	}
	var got []string
	logtail.EachLine(p, 1<<20, func(l []byte) bool { got = append(got, string(l)); return true })
	if len(got) != 9 || got[0] != "line 0029" || got[8] != "line 0021" {
		t.Errorf("lines newest first across parts: %q", got)
	}
	if err := Remove(p); err != nil {
		t.Fatal(err)
	}
	if left := Parts(p); len(left) != 0 {
		t.Errorf("left after Remove: %v", left)
	}
}

func TestIsPart(t *testing.T) {
	for name, want := range map[string]bool{"agent.log": true, "agent.log.1": true, "agent.log.12": true, "agent.log.offsets": true,
		".agent.log.new-123": true, ".agent.log.offsets-9": true, "agent.logx": false, "agent.log.x": false, "record.json": false} {
		if IsPart("agent.log", name) != want {
			t.Errorf("IsPart(%q) = %v", name, !want)
		}
	}
}

// A reader that follows the log while it rotates reads, at every offset,
// exactly what was written there (or learns it was rotated away).
func TestFollowAcrossRotations(t *testing.T) {
	p := filepath.Join(t.TempDir(), "agent.log")
	all := lines(0, 3000)
	w, err := Open(p, 64, 3)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < len(all); i += 13 {
			w.Write(all[i:min(i+13, len(all))])
		}
		w.Close()
	}()
	off, finished := int64(0), false
	for !finished {
		select {
		case <-done:
			finished = true
		default:
		}
		c, err := logtail.Since(p, off, 50, false)
		if err != nil {
			t.Fatal(err)
		}
		if c.Reset {
			t.Fatalf("the log looked reset at %d: %+v", off, c)
		}
		if c.Start < off || c.Next > int64(len(all)) || string(c.Data) != string(all[c.Start:c.Next]) {
			t.Fatalf("at %d read %d..%d %q, which is not what was written there", off, c.Start, c.Next, c.Data)
		}
		off = c.Next
	}
	for off < int64(len(all)) {
		c, _ := logtail.Since(p, off, 1<<20, false)
		if string(c.Data) != string(all[c.Start:c.Next]) {
			t.Fatalf("the end: %+v", c)
		}
		off = c.Next
	}
}
