// Package logtail reads the end of a growing file — an agent's log, a
// project's events.jsonl — so that what it costs follows the size of the
// answer, never the size of the file. Every reader of a log's tail in
// Shepherd goes through it.
package logtail

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// open opens path for reading only if it is a regular file (opening a FIFO
// would block). A missing file is (nil, nil).
func open(path string) (*os.File, int64, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) { // removed meanwhile
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	fi, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// Last returns at most max bytes from the end of the file and the offset
// they start at (0: the whole file). A missing file is empty.
func Last(path string, max int64) ([]byte, int64, error) {
	f, size, err := open(path)
	if f == nil || err != nil {
		return nil, 0, err
	}
	defer f.Close()
	return lastAt(f, size, max)
}

// lastAt reads the last max bytes of r, which is size bytes long: one read,
// whatever the size.
func lastAt(r io.ReaderAt, size, max int64) ([]byte, int64, error) {
	off := max64(size-max, 0)
	buf := make([]byte, size-off)
	n, err := r.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) { // EOF: it shrank meanwhile
		return nil, 0, err
	}
	return buf[:n], off, nil
}

// Lines returns the last n lines of the file (the last one may lack its
// newline), reading backwards in blocks until it has them; at most max
// bytes. A missing file is empty.
func Lines(path string, n int, max int64) ([]byte, error) {
	if n <= 0 {
		return nil, nil
	}
	f, size, err := open(path)
	if f == nil || err != nil {
		return nil, err
	}
	defer f.Close()
	buf, _, err := backwards(f, size, max, func(buf []byte) bool {
		// n lines need n newlines before them (the last line may lack one).
		return bytes.Count(bytes.TrimSuffix(buf, []byte{'\n'}), []byte{'\n'}) >= n
	})
	if err != nil {
		return nil, err
	}
	body := bytes.TrimSuffix(buf, []byte{'\n'})
	cut := len(body)
	for i := 0; i < n; i++ {
		j := bytes.LastIndexByte(body[:cut], '\n')
		if j < 0 {
			cut = -1
			break
		}
		cut = j
	}
	out := buf[cut+1:]
	if int64(len(out)) > max {
		out = out[int64(len(out))-max:]
	}
	return out, nil
}

// Complete returns the last n complete lines of the file (without their
// newlines or a trailing '\r') and the offset just past them. A partial last
// line, still being written, is left out, so that following from the offset
// hands it over once it is complete. At most max bytes are read; a first
// line cut by that bound is dropped. A missing file is empty.
func Complete(path string, n int, max int64) ([]string, int64, error) {
	f, size, err := open(path)
	if f == nil || err != nil {
		return []string{}, 0, err
	}
	defer f.Close()
	buf, off, err := backwards(f, size, max, func(buf []byte) bool {
		return bytes.Count(buf, []byte{'\n'}) > n
	})
	if err != nil {
		return nil, 0, err
	}
	end := bytes.LastIndexByte(buf, '\n') + 1 // 0 when no complete line
	body := buf[:end]
	if off > 0 {
		// The first line read may be cut: drop it.
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			body = body[i+1:]
		} else {
			body = nil
		}
	}
	lines := SplitLines(body)
	if n >= 0 && len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines, off + int64(end), nil
}

// backwards reads blocks from the end of f (of size bytes) until enough says
// so or max bytes are read; it returns them and the offset they start at.
func backwards(f *os.File, size, max int64, enough func([]byte) bool) ([]byte, int64, error) {
	const block = 64 << 10
	start := max64(size-max, 0)
	var buf []byte
	off := size
	for off > start {
		step := min(int64(block), off-start)
		off -= step
		chunk := make([]byte, step)
		if _, err := f.ReadAt(chunk, off); err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, err
		}
		buf = append(chunk, buf...)
		if enough(buf) {
			break
		}
	}
	return buf, off, nil
}

// Chunk is what a file holds past an offset.
type Chunk struct {
	Data  []byte
	Start int64 // the offset Data starts at
	Next  int64 // the offset to read from next time
	// Reset: the file is shorter than the offset asked (it was deleted or
	// truncated), so Data starts again at its beginning.
	Reset bool
	// Skipped: more was appended than max; with newest, Data is the end of
	// it and the bytes between the offset and Start were passed over.
	Skipped bool
}

// Since reads what the file holds after byte offset off, at most max bytes:
// the first max of them, or with newest the last max. A missing file is
// empty (a Reset if off > 0).
func Since(path string, off, max int64, newest bool) (Chunk, error) {
	f, size, err := open(path)
	if err != nil {
		return Chunk{Next: off}, err
	}
	if f == nil {
		return Chunk{Reset: off > 0}, nil
	}
	defer f.Close()
	c := Chunk{Start: off}
	if size < off {
		c.Start, c.Reset = 0, true
	}
	n := size - c.Start
	if n > max {
		n = max
		if newest {
			c.Start, c.Skipped = size-max, true
		}
	}
	buf := make([]byte, n)
	got, err := f.ReadAt(buf, c.Start)
	if err != nil && !errors.Is(err, io.EOF) {
		return Chunk{Next: off}, err
	}
	c.Data = buf[:got]
	c.Next = c.Start + int64(got)
	return c, nil
}

// SplitLines splits complete lines (b ends with '\n' or is empty), dropping
// the newlines and a '\r' before them.
func SplitLines(b []byte) []string {
	if len(b) == 0 {
		return []string{}
	}
	lines := bytes.Split(bytes.TrimSuffix(b, []byte{'\n'}), []byte{'\n'})
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = string(bytes.TrimSuffix(l, []byte{'\r'}))
	}
	return out
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
