package logtail

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLines(t *testing.T) {
	p := write(t, "a\nb\nc\n")
	for _, tc := range []struct {
		n    int
		want string
	}{{0, ""}, {1, "c\n"}, {2, "b\nc\n"}, {3, "a\nb\nc\n"}, {9, "a\nb\nc\n"}} {
		got, err := Lines(p, tc.n, 1<<20)
		if err != nil || string(got) != tc.want {
			t.Errorf("Lines(%d) = %q, %v; want %q", tc.n, got, err, tc.want)
		}
	}
	// The last line may lack its newline; max bounds the answer.
	p = write(t, "a\nb")
	if got, _ := Lines(p, 1, 1<<20); string(got) != "b" {
		t.Errorf("no newline: %q", got)
	}
	if got, _ := Lines(p, 5, 2); string(got) != "\nb" {
		t.Errorf("max 2: %q", got)
	}
	if got, err := Lines(filepath.Join(t.TempDir(), "none"), 5, 10); err != nil || len(got) != 0 {
		t.Errorf("missing: %q %v", got, err)
	}
	// Lines over many blocks.
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		b.WriteString("line of some length\n")
	}
	p = write(t, b.String())
	got, _ := Lines(p, 5000, 1<<30)
	if strings.Count(string(got), "\n") != 5000 {
		t.Errorf("5000 lines: got %d", strings.Count(string(got), "\n"))
	}
}

func TestComplete(t *testing.T) {
	p := write(t, "a\r\nb\nparti")
	lines, off, err := Complete(p, 5, 1<<20)
	if err != nil || strings.Join(lines, "|") != "a|b" || off != 5 {
		t.Fatalf("%q %d %v", lines, off, err)
	}
	lines, off, _ = Complete(p, 1, 1<<20)
	if strings.Join(lines, "|") != "b" || off != 5 {
		t.Fatalf("n=1: %q %d", lines, off)
	}
	// A first line cut by max is dropped.
	lines, _, _ = Complete(p, 5, 8)
	if strings.Join(lines, "|") != "b" {
		t.Fatalf("max 8: %q", lines)
	}
	if lines, off, err := Complete(filepath.Join(t.TempDir(), "none"), 5, 10); err != nil || len(lines) != 0 || off != 0 {
		t.Fatalf("missing: %q %d %v", lines, off, err)
	}
}

func TestSince(t *testing.T) {
	p := write(t, "0123456789")
	c, _ := Since(p, 4, 100, false)
	if string(c.Data) != "456789" || c.Start != 4 || c.Next != 10 || c.Reset || c.Skipped {
		t.Fatalf("%+v", c)
	}
	c, _ = Since(p, 2, 3, false)
	if string(c.Data) != "234" || c.Next != 5 {
		t.Fatalf("first 3: %+v", c)
	}
	c, _ = Since(p, 2, 3, true)
	if string(c.Data) != "789" || c.Start != 7 || !c.Skipped || c.Next != 10 {
		t.Fatalf("newest 3: %+v", c)
	}
	c, _ = Since(p, 20, 100, false)
	if string(c.Data) != "0123456789" || !c.Reset || c.Next != 10 {
		t.Fatalf("shrunk: %+v", c)
	}
	c, err := Since(filepath.Join(t.TempDir(), "none"), 3, 100, false)
	if err != nil || !c.Reset || len(c.Data) != 0 || c.Next != 0 {
		t.Fatalf("missing: %+v %v", c, err)
	}
}

func TestNotRegular(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Last(dir, 10); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("folder: %v", err)
	}
}

// countingReaderAt stands for a log of any size and records what is read.
type countingReaderAt struct {
	size, minOff int64
	read         int64
	calls        int
	tail         []byte // the last bytes of the "file"; zeros before
}

func (r *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	r.calls++
	if off < r.minOff || r.minOff == 0 {
		r.minOff = off
	}
	n := 0
	for i := range p {
		pos := off + int64(i)
		if pos >= r.size {
			r.read += int64(n)
			return n, io.EOF
		}
		if k := pos - (r.size - int64(len(r.tail))); k >= 0 {
			p[i] = r.tail[k]
		} else {
			p[i] = 0
		}
		n++
	}
	r.read += int64(n)
	return n, nil
}

// The proof that the cost of reading a tail does not grow with the file:
// whatever its size, one read of at most max bytes from size-max.
func TestLastReadsOnlyTheTail(t *testing.T) {
	const max = 64 << 10
	tail := []byte("the end\n")
	for _, size := range []int64{int64(len(tail)), max, max + 1, 1 << 30, 1 << 40, 1 << 50} {
		r := &countingReaderAt{size: size, tail: tail}
		got, off, err := lastAt(r, 0, size, max)
		if err != nil {
			t.Fatal(err)
		}
		if r.calls != 1 || r.read > max || r.minOff < size-max || off != max64(size-max, 0) {
			t.Errorf("size %d: %d reads, %d bytes from offset %d", size, r.calls, r.read, r.minOff)
		}
		if !strings.HasSuffix(string(got), "the end\n") {
			t.Errorf("size %d: tail %q", size, got[max64(int64(len(got))-10, 0):])
		}
	}
}

var errBoom = errors.New("boom")

type errReaderAt struct{}

func (errReaderAt) ReadAt([]byte, int64) (int, error) { return 0, errBoom }

// A file that shrinks between stat and read is read as far as it goes; a
// read error is returned.
func TestLastShortRead(t *testing.T) {
	r := &countingReaderAt{size: 10, tail: []byte("{}\nnot json")}
	got, _, err := lastAt(r, 0, 100, 1000)
	if err != nil || len(got) != 10 {
		t.Fatalf("%q, %v", got, err)
	}
	if _, _, err = lastAt(errReaderAt{}, 0, 100, 1000); !errors.Is(err, errBoom) {
		t.Fatalf("read error: %v", err)
	}
}
