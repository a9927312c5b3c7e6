package sandbox

import (
	"bytes"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

type scanDir struct {
	path  string
	depth int
	fd    int
}

// openScanDir opens the folder name — an absolute path, or one entry of
// the folder parent (a descriptor) whose path is parentPath — without
// following a symlink.
func openScanDir(name string, depth, parent int, parentPath string) (scanDir, error) {
	at, path := unix.AT_FDCWD, name
	if parent >= 0 {
		at, path = parent, filepath.Join(parentPath, name)
	}
	fd, err := unix.Openat(at, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return scanDir{}, err
	}
	return scanDir{path: path, depth: depth, fd: fd}, nil
}

func (d scanDir) close() { unix.Close(d.fd) }

// read calls fn with each entry (not "." or "..") and whether it is a
// folder (a symlink is not), read with getdents into buf: no sorting, no
// stat where the file system gives the type.
func (d scanDir) read(buf []byte, fn func(name string, dir bool)) error {
	for {
		n, err := unix.Getdents(d.fd, buf)
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		for off := 0; off < n; {
			// struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name.
			reclen := int(*(*uint16)(unsafe.Pointer(&buf[off+16])))
			typ := buf[off+18]
			name := buf[off+19 : off+reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			off += reclen
			if string(name) == "." || string(name) == ".." {
				continue
			}
			dir := typ == unix.DT_DIR
			if typ == unix.DT_UNKNOWN {
				var st unix.Stat_t
				dir = unix.Fstatat(d.fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
			}
			fn(string(name), dir)
		}
	}
}
