// Package logrotate writes a log that is capped in size and rotated, the
// way supervisord's logfile_maxbytes and backups or PM2's log rotation do:
// when the file reaches its cap it becomes path.1 (path.1 becomes path.2,
// and so on; the oldest beyond the number kept is removed) and writing goes
// on in a new path. Offsets in the log count from its first byte ever,
// across rotations, through its offsets file (see package logtail, which
// reads such logs).
//
// A write the disk refuses (it is full) is dropped, not retried: the bytes
// are counted, and the next write that the disk takes is preceded by a line
// that says how much was dropped and why. A Writer never blocks its caller
// on a full disk and never grows a file past its cap (but for what other
// writers append to it).
package logrotate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"shepherd/backend/logtail"
)

const fileMode = 0o600

// Writer appends to a rotated log. It is not safe for concurrent use.
type Writer struct {
	path string
	max  int64 // bytes per file; ≤ 0: never rotated
	keep int   // older parts kept

	f    *os.File
	ino  uint64
	base int64 // the log's offset of f's first byte
	size int64 // f's size, as this writer knows it
	// parts are the inodes of the log's files, newest (f) first, for the
	// offsets file.
	parts []uint64
	offs  logtail.Offsets

	stderr  bool // f is also this process's stderr: it follows f
	dropped int64
	why     error
	lastNL  bool // the last byte written ends a line
}

// Open opens the log at path for appending, creating it (0600) if needed,
// capped at max bytes per file (≤ 0: never rotated) with keep older parts.
// If the process's stderr is that file, it is moved to each new file too.
func Open(path string, max int64, keep int) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, fileMode)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	w := &Writer{path: path, max: max, keep: max0(keep), f: f, ino: logtail.Inode(fi), size: fi.Size(), lastNL: true}
	if se, err := os.Stderr.Stat(); err == nil && os.SameFile(se, fi) {
		w.stderr = true
	}
	w.load()
	return w, nil
}

func max0(n int) int {
	if n < 0 {
		return 0
	}
	return n
}

// load learns where the current file starts in the log, and its older
// parts, from the offsets file. A file the offsets do not name (the log was
// deleted and started again) starts where its newest older part ends, and
// is written into the offsets at once, so readers agree.
func (w *Writer) load() {
	w.parts = []uint64{w.ino}
	offs, ok := logtail.ReadOffsets(w.path)
	if !ok {
		w.offs = logtail.Offsets{w.ino: 0}
		return
	}
	w.offs = logtail.Offsets{}
	base, known := offs[w.ino]
	next := base // where the part before ends
	var older []uint64
	var olderOffs []int64
	for k := 1; k <= w.keep+1; k++ {
		fi, err := os.Stat(logtail.Rotated(w.path, k))
		if err != nil {
			break
		}
		ino := logtail.Inode(fi)
		start, ok := offs[ino]
		if !ok {
			start = next - fi.Size()
		}
		if !known && k == 1 {
			base, known = start+fi.Size(), true
		}
		older, olderOffs = append(older, ino), append(olderOffs, start)
		next = start
	}
	w.base = base
	w.offs[w.ino] = base
	for i, ino := range older {
		w.parts = append(w.parts, ino)
		w.offs[ino] = olderOffs[i]
	}
	if b, ok := offs[w.ino]; !ok || b != base {
		_ = w.writeOffsets(w.offs, w.parts) // best effort: readers then read it from 0
	}
}

// Offset is the log's offset just past what this writer has written.
func (w *Writer) Offset() int64 { return w.base + w.size }

// Dropped is how many bytes were dropped since the last note about it.
func (w *Writer) Dropped() int64 { return w.dropped }

// Write appends p, rotating first whenever the current file would pass its
// cap (a write is split across files). It returns how much of p was
// written and the error that stopped the rest, which is counted as dropped.
func (w *Writer) Write(p []byte) (int, error) {
	if w.dropped > 0 {
		if err := w.note(); err != nil {
			w.drop(int64(len(p)), err)
			return 0, err
		}
	}
	n := 0
	for n < len(p) {
		chunk := p[n:]
		if w.max > 0 {
			if w.size >= w.max {
				if err := w.rotate(); err != nil {
					w.drop(int64(len(p)-n), err)
					return n, err
				}
			}
			if room := w.max - w.size; int64(len(chunk)) > room {
				chunk = chunk[:room]
			}
		}
		m, err := w.f.Write(chunk)
		w.size += int64(m)
		n += m
		if m > 0 {
			w.lastNL = chunk[m-1] == '\n'
		}
		if err != nil {
			w.drop(int64(len(p)-n), err)
			return n, err
		}
	}
	return n, nil
}

func (w *Writer) drop(n int64, why error) {
	w.dropped += n
	w.why = why
}

// note writes the line that says what was dropped; it is dropped too if
// the disk still refuses it.
func (w *Writer) note() error {
	lead := ""
	if !w.lastNL {
		lead = "\n"
	}
	line := fmt.Sprintf("%s[shepherd] %d bytes of output were dropped: %v\n", lead, w.dropped, w.why)
	dropped, why := w.dropped, w.why
	w.dropped, w.why = 0, nil
	if _, err := w.Write([]byte(line)); err != nil {
		w.dropped, w.why = dropped, why // the note's own bytes are not output
		return err
	}
	return nil
}

// Close closes the current file.
func (w *Writer) Close() error { return w.f.Close() }

// rotate moves the current file to path.1 (and each older part one up,
// the oldest beyond keep removed) and starts a new one. Space is freed
// first (the oldest part goes), and the offsets of the new layout are
// written before anything moves; if they cannot be, nothing moves.
func (w *Writer) rotate() error {
	fi, err := w.f.Stat()
	if err == nil {
		w.size = fi.Size() // other writers (the shim's stderr) may have appended
	}
	dir := filepath.Dir(w.path)
	for k := w.keep; k <= w.keep+maxExtra; k++ {
		if k == 0 {
			continue
		}
		if err := os.Remove(logtail.Rotated(w.path, k)); errors.Is(err, fs.ErrNotExist) && k > w.keep {
			break
		}
	}
	next, err := os.CreateTemp(dir, "."+filepath.Base(w.path)+".new-*")
	if err != nil {
		return err
	}
	nfi, err := next.Stat()
	if err != nil {
		next.Close()
		os.Remove(next.Name())
		return err
	}
	if err := next.Chmod(fileMode); err != nil {
		next.Close()
		os.Remove(next.Name())
		return err
	}
	nino, nbase := logtail.Inode(nfi), w.base+w.size
	parts := []uint64{nino}
	if w.keep > 0 {
		parts = append(parts, w.parts...)
		if len(parts) > w.keep+1 {
			parts = parts[:w.keep+1]
		}
	}
	offs := logtail.Offsets{nino: nbase}
	for _, ino := range parts[1:] {
		offs[ino] = w.offs[ino]
	}
	// Readers may still hold the current file under its name while the
	// parts move: it stays in the offsets until the next rotation.
	offs[w.ino] = w.base
	if err := w.writeOffsets(offs, append(parts, w.ino)); err != nil {
		next.Close()
		os.Remove(next.Name())
		return err
	}
	if w.keep > 0 {
		for k := w.keep - 1; k >= 1; k-- {
			_ = os.Rename(logtail.Rotated(w.path, k), logtail.Rotated(w.path, k+1))
		}
		// A link, then a rename over the name: the log's name always
		// leads to a file. Where links are not possible, a rename.
		if err := os.Link(w.path, logtail.Rotated(w.path, 1)); err != nil {
			_ = os.Rename(w.path, logtail.Rotated(w.path, 1))
		}
	}
	if err := os.Rename(next.Name(), w.path); err != nil {
		next.Close()
		os.Remove(next.Name())
		return err
	}
	if w.stderr {
		_ = dupStderr(next)
	}
	w.f.Close()
	w.f, w.ino, w.base, w.size = next, nino, nbase, 0
	w.parts, w.offs = parts, offs
	return nil
}

// maxExtra bounds the parts beyond keep that a rotation removes (left by a
// larger keep before).
const maxExtra = 100

// writeOffsets writes the offsets file atomically (temp file, rename). No
// fsync: after a crash of the machine a reader that finds none reads the
// log from 0.
func (w *Writer) writeOffsets(offs logtail.Offsets, order []uint64) error {
	path := w.path + logtail.OffsetsSuffix
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(offs.Format(order)); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(fileMode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Append appends b (whole lines) to the rotated log at path: the cheap way
// for a log written now and then by one process (events.jsonl), which
// opens it, appends and closes it. It rotates first when b would take the
// file past max, so every part holds whole lines.
func Append(path string, b []byte, max int64, keep int) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, fileMode)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if max <= 0 || fi.Size() == 0 || fi.Size()+int64(len(b)) <= max {
		_, werr := f.Write(b)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		return werr
	}
	f.Close()
	w, err := Open(path, max, keep)
	if err != nil {
		return err
	}
	defer w.Close()
	if err := w.rotate(); err != nil {
		return fmt.Errorf("rotate %s: %w", path, err)
	}
	_, err = w.Write(b)
	return err
}

// Remove removes the log at path, its older parts and its offsets file.
func Remove(path string) error {
	err := os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	for k := 1; k <= maxExtra+1000; k++ {
		if rerr := os.Remove(logtail.Rotated(path, k)); rerr != nil {
			if errors.Is(rerr, fs.ErrNotExist) {
				break
			}
			err = errors.Join(err, rerr)
		}
	}
	if rerr := os.Remove(path + logtail.OffsetsSuffix); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	return err
}

// Parts lists the files of the log at path that exist: the log, its older
// parts, its offsets file.
func Parts(path string) []string {
	var out []string
	for _, p := range append([]string{path, path + logtail.OffsetsSuffix}, rotatedNames(path)...) {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func rotatedNames(path string) []string {
	var out []string
	for k := 1; k <= maxExtra+1000; k++ {
		p := logtail.Rotated(path, k)
		if _, err := os.Lstat(p); err != nil {
			break
		}
		out = append(out, p)
	}
	return out
}

// IsPart reports whether name (a base name) is one of the files of the log
// named base: the log, an older part, its offsets file, or a file a
// rotation was making.
func IsPart(base, name string) bool {
	if name == base || name == base+logtail.OffsetsSuffix {
		return true
	}
	if rest, ok := cutPrefix(name, base+"."); ok {
		if _, err := strconv.Atoi(rest); err == nil {
			return true
		}
	}
	_, tmp := cutPrefix(name, "."+base+".")
	return tmp
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return "", false
}
