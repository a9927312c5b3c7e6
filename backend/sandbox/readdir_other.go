//go:build !linux

package sandbox

import (
	"os"
	"path/filepath"
)

type scanDir struct {
	path  string
	depth int
	fd    int
}

// openScanDir names the folder name, absolute or in parentPath.
func openScanDir(name string, depth, parent int, parentPath string) (scanDir, error) {
	if parent >= 0 {
		name = filepath.Join(parentPath, name)
	}
	return scanDir{path: name, depth: depth, fd: 0}, nil
}

func (d scanDir) close() {}

// read calls fn with each entry and whether it is a folder (a symlink is
// not).
func (d scanDir) read(_ []byte, fn func(name string, dir bool)) error {
	ents, err := os.ReadDir(d.path)
	for _, e := range ents {
		fn(e.Name(), e.IsDir())
	}
	return err
}
