package shim

import (
	"os"
	"path/filepath"
)

// The shim's files (run.json, exit.json) are written atomically: a
// temporary file, then a rename. There is no fsync: a file must survive the
// engine's crash, which the page cache does; after a power loss the boot id
// differs and the engine treats the run as unknown anyway. Leaving it out
// keeps a hundred agents that end at once from queueing a hundred journal
// commits in front of the engine's records.

// pendingFile is a file's temporary file, made ahead of what it will hold.
type pendingFile struct {
	path string
	tmp  *os.File // nil: made when written
}

// prepareFile makes path's temporary file now (path "": nothing is ever
// written). If it cannot be made, write tries again.
func prepareFile(path string) *pendingFile {
	pf := &pendingFile{path: path}
	if path != "" {
		pf.tmp, _ = createTemp(path)
	}
	return pf
}

// write puts b (one JSON value; a newline is added) in place.
func (pf *pendingFile) write(b []byte) {
	if pf.path == "" {
		return
	}
	tmp := pf.tmp
	pf.tmp = nil
	if tmp == nil {
		var err error
		if tmp, err = createTemp(pf.path); err != nil {
			return
		}
	}
	_ = replace(tmp, pf.path, b)
}

// discard removes a temporary file that was never written.
func (pf *pendingFile) discard() {
	if pf.tmp != nil {
		pf.tmp.Close()
		os.Remove(pf.tmp.Name())
		pf.tmp = nil
	}
}

// writeFile writes b (one JSON value; a newline is added) to path
// atomically.
func writeFile(path string, b []byte) error {
	tmp, err := createTemp(path)
	if err != nil {
		return err
	}
	return replace(tmp, path, b)
}

// createTemp makes a temporary file next to path, 0600.
func createTemp(path string) (*os.File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil { // whatever the umask
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// replace writes b and a newline to tmp and renames it over path.
func replace(tmp *os.File, path string, b []byte) error {
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
