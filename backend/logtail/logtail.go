// Package logtail reads the end of a growing file — an agent's log, a
// project's events.jsonl — so that what it costs follows the size of the
// answer, never the size of the file, across the parts a rotated log is
// kept in (rotated.go). Every reader of a log's tail in Shepherd goes
// through it.
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

// Last returns at most max bytes from the end of the log and the offset
// they start at (the log's start: the whole of what is kept). A missing log
// is empty. A rotated log is read across its parts, its offsets counted from
// its first byte ever (rotated.go).
func Last(path string, max int64) ([]byte, int64, error) {
	v, err := openView(path, func(start, end int64) bool { return end-start < max })
	if v == nil || err != nil {
		return nil, 0, err
	}
	defer v.close()
	return lastAt(v, v.start(), v.end(), max)
}

// lastAt reads the last max bytes of r, whose bytes are at offsets
// [start, end): one read, whatever the size.
func lastAt(r io.ReaderAt, start, end, max int64) ([]byte, int64, error) {
	off := max64(end-max, start)
	buf := make([]byte, end-off)
	n, err := r.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) { // EOF: it shrank meanwhile
		return nil, 0, err
	}
	return buf[:n], off, nil
}

// Lines returns the last n lines of the log (the last one may lack its
// newline), reading backwards in blocks until it has them; at most max
// bytes. A missing log is empty.
func Lines(path string, n int, max int64) ([]byte, error) {
	if n <= 0 {
		return nil, nil
	}
	v, err := openView(path, func(start, end int64) bool { return end-start < max })
	if v == nil || err != nil {
		return nil, err
	}
	defer v.close()
	buf, _, err := backwards(v, v.start(), v.end(), max, func(buf []byte) bool {
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

// Complete returns the last n complete lines of the log (without their
// newlines or a trailing '\r') and the offset just past them. A partial last
// line, still being written, is left out, so that following from the offset
// hands it over once it is complete. At most max bytes are read; a first
// line cut by that bound (or by a rotation) is dropped. A missing log is
// empty.
func Complete(path string, n int, max int64) ([]string, int64, error) {
	v, err := openView(path, func(start, end int64) bool { return end-start < max })
	if v == nil || err != nil {
		return []string{}, 0, err
	}
	defer v.close()
	buf, off, err := backwards(v, v.start(), v.end(), max, func(buf []byte) bool {
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

// backwards reads blocks from end back towards start (offsets of r) until
// enough says so or max bytes are read; it returns them and the offset they
// start at.
func backwards(r io.ReaderAt, start, end, max int64, enough func([]byte) bool) ([]byte, int64, error) {
	const block = 64 << 10
	lo := max64(end-max, start)
	var buf []byte
	off := end
	for off > lo {
		step := min(int64(block), off-lo)
		off -= step
		chunk := make([]byte, step)
		if _, err := r.ReadAt(chunk, off); err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, err
		}
		buf = append(chunk, buf...)
		if enough(buf) {
			break
		}
	}
	return buf, off, nil
}

// Chunk is what a log holds past an offset.
type Chunk struct {
	Data  []byte
	Start int64 // the offset Data starts at
	Next  int64 // the offset to read from next time
	// Reset: the log is shorter than the offset asked (it was deleted or
	// truncated), so Data starts again at its beginning.
	Reset bool
	// Skipped: more was appended than max, or the bytes at the offset were
	// rotated away; Data starts past them (at Start) and the bytes between
	// the offset and Start were passed over.
	Skipped bool
}

// Since reads what the log holds after offset off, at most max bytes: the
// first max of them, or with newest the last max. A missing log is empty (a
// Reset if off > 0). Bytes no longer kept (rotated away) are Skipped.
func Since(path string, off, max int64, newest bool) (Chunk, error) {
	v, err := openView(path, func(start, end int64) bool { return start > off && end >= off })
	if err != nil {
		return Chunk{Next: off}, err
	}
	if v == nil {
		return Chunk{Reset: off > 0}, nil
	}
	defer v.close()
	end := v.end()
	c := Chunk{Start: off}
	switch {
	case end < off:
		c.Start, c.Reset = v.start(), true
	case off < v.start():
		c.Start, c.Skipped = v.start(), true
	}
	n := end - c.Start
	if n > max {
		n = max
		if newest {
			c.Start, c.Skipped = end-max, true
		}
	}
	buf := make([]byte, n)
	got, err := v.ReadAt(buf, c.Start)
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
