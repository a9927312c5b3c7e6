package logtail

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// A log that is rotated (package logrotate writes them: an agent's log, a
// project's events.jsonl) is a file and its older parts beside it:
//
//	agent.log          the newest part, written to
//	agent.log.1 … .N   older parts, .1 the newest of them
//	agent.log.offsets  where each part starts in the log as a whole
//
// Offsets count from the log's first byte ever, across rotations, so that a
// reader that follows a log from an offset (the window, `shepherd logs -f`,
// the engine's scanner, a run's marker) goes on across a rotation instead of
// starting again. The offsets file maps each part (by inode) to the offset
// of its first byte; it is written before a rotation moves anything, so that
// it names every part a reader may find, and a part is read only where the
// offsets place it, right before the next (the parts are contiguous). A log
// without an offsets file was never rotated: it starts at offset 0, and
// files named like older parts beside it are not read as its parts.
//
// Every function of this package reads a log this way.

// OffsetsSuffix names a rotated log's offsets file (path + OffsetsSuffix).
const OffsetsSuffix = ".offsets"

// maxParts bounds how many older parts a reader looks for.
const maxParts = 1000

// maxOffsetsFile bounds what is read of an offsets file.
const maxOffsetsFile = 64 << 10

// Rotated is the path of the k-th older part of the log at path (k ≥ 1).
func Rotated(path string, k int) string { return path + "." + strconv.Itoa(k) }

// Offsets is a rotated log's offsets file: the offset of each part's first
// byte, by the part's inode.
type Offsets map[uint64]int64

// ParseOffsets reads an offsets file: one line per part, "<inode> <offset>"
// in decimal, an offset ≥ 0. Anything else is an error naming the line.
func ParseOffsets(b []byte) (Offsets, error) {
	if len(b) > maxOffsetsFile {
		return nil, fmt.Errorf("offsets file is %d bytes long; at most %d", len(b), maxOffsetsFile)
	}
	out := Offsets{}
	for i, line := range bytes.Split(b, []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		ino, off, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			return nil, fmt.Errorf("offsets line %d: want \"<inode> <offset>\", got %q", i+1, line)
		}
		n, err := strconv.ParseUint(string(ino), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("offsets line %d: inode %q is not a number", i+1, ino)
		}
		o, err := strconv.ParseInt(string(off), 10, 64)
		if err != nil || o < 0 {
			return nil, fmt.Errorf("offsets line %d: offset %q is not a number ≥ 0", i+1, off)
		}
		out[n] = o
	}
	return out, nil
}

// Format renders o as an offsets file, its lines in the order of parts
// (each part once; parts o does not place are left out).
func (o Offsets) Format(order []uint64) []byte {
	var b []byte
	seen := map[uint64]bool{}
	for _, ino := range order {
		if off, ok := o[ino]; ok && !seen[ino] {
			seen[ino] = true
			b = strconv.AppendUint(b, ino, 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, off, 10)
			b = append(b, '\n')
		}
	}
	return b
}

// ReadOffsets reads the offsets file of the log at path; ok is false when
// there is none (the log was never rotated) or it cannot be read.
func ReadOffsets(path string) (Offsets, bool) {
	b, ok := readOffsetsFile(path)
	if !ok {
		return nil, false
	}
	o, err := ParseOffsets(b)
	if err != nil {
		return nil, false
	}
	return o, true
}

func readOffsetsFile(path string) ([]byte, bool) {
	f, err := os.Open(path + OffsetsSuffix)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxOffsetsFile+1))
	if err != nil {
		return nil, false
	}
	return b, true
}

// Inode is the inode number of a file.
func Inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// segment is one part of a log, open.
type segment struct {
	f     *os.File
	start int64 // the offset of its first byte in the log as a whole
	size  int64
}

// view is a log's parts, oldest first, contiguous: one io.ReaderAt over
// the log's offsets.
type view struct {
	segs   []segment
	placed bool // its newest part was placed by the offsets file
}

func (v *view) start() int64 { return v.segs[0].start }
func (v *view) end() int64 {
	s := v.segs[len(v.segs)-1]
	return s.start + s.size
}

func (v *view) close() {
	for _, s := range v.segs {
		s.f.Close()
	}
}

// ReadAt reads len(p) bytes at the log's offset off, across parts.
func (v *view) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for _, s := range v.segs {
		if n == len(p) {
			break
		}
		at := off + int64(n)
		if at < s.start || at >= s.start+s.size {
			continue
		}
		want := min(int64(len(p)-n), s.start+s.size-at)
		got, err := s.f.ReadAt(p[n:n+int(want)], at-s.start)
		n += got
		if err != nil && !errors.Is(err, io.EOF) {
			return n, err
		}
		if int64(got) < want {
			break // the part shrank meanwhile
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// ErrMoving is a read of a log whose parts kept moving (rotations under
// way) through every attempt to open them in line; a later read finds them.
var ErrMoving = errors.New("the log is being rotated; read it again")

// openView opens the log at path with as many older parts as more says it
// needs, given the span [start, end) held so far. A missing log is (nil,
// nil). A rotation may move the parts while they are opened: a view whose
// parts cannot be told to line up is opened again.
func openView(path string, more func(start, end int64) bool) (*view, error) {
	for try := 0; ; try++ {
		v, settled, err := tryView(path, more)
		if err != nil || v == nil || settled {
			return v, err
		}
		if try == 9 {
			if v.placed {
				return v, nil // its newest parts, in line; older ones later
			}
			v.close()
			return nil, ErrMoving
		}
		v.close()
	}
}

// tryView is one attempt of openView; settled is false when a rotation
// moved the parts meanwhile. The offsets file is read before the older
// parts are opened and again after: a rotation writes it before it removes
// or moves anything, so when it reads the same both times, every part
// opened by name is one it places (an inode it names cannot have been
// reused by a part made since).
func tryView(path string, more func(start, end int64) bool) (v *view, settled bool, err error) {
	f, size, err := open(path)
	if f == nil || err != nil {
		return nil, true, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, true, err
	}
	v = &view{segs: []segment{{f: f, size: size}}}
	raw, ok := readOffsetsFile(path)
	if !ok {
		return v, true, nil // never rotated: from 0
	}
	offs, err := ParseOffsets(raw)
	if err != nil {
		return v, true, nil // damaged: read alone, from 0
	}
	ino := Inode(fi)
	base, found := offs[ino]
	if !found {
		// Not a part the offsets know: the file opened is no longer the
		// newest part (the offsets are written first), or the log was
		// started again without them.
		return v, false, nil
	}
	v.segs[0].start, v.placed = base, true
	seen := map[uint64]bool{ino: true}
	for k := 1; k <= maxParts && more(v.start(), v.end()); k++ {
		g, gsize, err := open(Rotated(path, k))
		if err != nil || g == nil {
			if _, err := os.Lstat(Rotated(path, k+1)); err == nil {
				return v, false, nil // on its way to the next name
			}
			break // no older part
		}
		gi, err := g.Stat()
		if err != nil {
			g.Close()
			break
		}
		gino := Inode(gi)
		if seen[gino] { // the same part under two names, mid-rotation
			g.Close()
			continue
		}
		seen[gino] = true
		start := v.start() - gsize
		if b, ok := offs[gino]; !ok || b != start || start < 0 {
			g.Close()
			if again, ok := readOffsetsFile(path); ok && bytes.Equal(again, raw) {
				break // not a part of this log: the older parts end here
			}
			return v, false, nil // a rotation moved them meanwhile
		}
		v.segs = append([]segment{{f: g, start: start, size: gsize}}, v.segs...)
	}
	if len(v.segs) > 1 {
		if again, ok := readOffsetsFile(path); !ok || !bytes.Equal(again, raw) {
			return v, false, nil
		}
	}
	return v, true, nil
}

// Size is the offset just past the last byte of the log at path: its
// current part's start plus its size (0 for a missing log).
func Size(path string) int64 {
	v, err := openView(path, func(int64, int64) bool { return false })
	if v == nil || err != nil {
		return 0
	}
	defer v.close()
	return v.end()
}

// Start is the offset of the oldest byte of the log at path that is still
// kept (0 for a log never rotated, or a missing one).
func Start(path string) int64 {
	v, err := openView(path, func(int64, int64) bool { return true })
	if v == nil || err != nil {
		return 0
	}
	defer v.close()
	return v.start()
}

// EachLine calls f with the lines of the log at path (without their
// newline; empty ones skipped), the newest first, across its parts, until f
// returns false or max bytes have been read from the end. A last line
// without its newline counts as a line; a first line cut by max is left
// out (the oldest part kept starts a line: the writers of such logs rotate
// between lines).
func EachLine(path string, max int64, f func(line []byte) bool) error {
	v, err := openView(path, func(start, end int64) bool { return end-start < max })
	if v == nil || err != nil {
		return err
	}
	defer v.close()
	lo := max64(v.start(), v.end()-max)
	const block = 64 << 10
	var pending []byte // the start of the log's span read so far, up to its first newline
	for off := v.end(); off > lo; {
		step := min(int64(block), off-lo)
		off -= step
		data := make([]byte, step, int(step)+len(pending))
		if _, err := v.ReadAt(data, off); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		data = append(data, pending...)
		first := bytes.IndexByte(data, '\n')
		if first < 0 {
			pending = data
			continue
		}
		lines := bytes.Split(data[first+1:], []byte{'\n'})
		for i := len(lines) - 1; i >= 0; i-- {
			if len(lines[i]) > 0 && !f(lines[i]) {
				return nil
			}
		}
		pending = data[:first]
	}
	if lo == v.start() && len(pending) > 0 {
		f(pending)
	}
	return nil
}
