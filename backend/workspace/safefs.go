package workspace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Agent files are read as data (SPEC, threat model): a path below a root
// the engine trusts is walked one folder at a time with O_NOFOLLOW, so no
// symlink on the way — a folder swapped for a link after git listed it
// included — is followed; the file itself is opened with O_NOFOLLOW and
// O_NONBLOCK (a named pipe opens at once instead of waiting for a writer)
// and read only when fstat says it is a regular file.

// errUnsafePath is a path git listed that is not a plain relative path.
var errUnsafePath = errors.New("not a relative path inside the tree")

// components splits rel (git's "/"-separated path) and refuses what would
// leave the root.
func components(rel string) ([]string, error) {
	if rel == "" || strings.HasPrefix(rel, "/") {
		return nil, fmt.Errorf("%q: %w", rel, errUnsafePath)
	}
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return nil, fmt.Errorf("%q: %w", rel, errUnsafePath)
		}
	}
	return parts, nil
}

// openDir opens root, a folder the engine trusts, for walking.
func openDir(root string) (int, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: root, Err: err}
	}
	return fd, nil
}

// walkParent opens the folder that holds rel's last part, below root,
// following no symlink; mkdir makes missing folders (mode 0755). The
// caller closes the fd.
func walkParent(root string, parts []string, mkdir bool) (int, error) {
	fd, err := openDir(root)
	if err != nil {
		return -1, err
	}
	for _, p := range parts[:len(parts)-1] {
		next, err := unix.Openat(fd, p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && mkdir {
			if err = unix.Mkdirat(fd, p, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = unix.Openat(fd, p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			}
		}
		unix.Close(fd)
		if err != nil {
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
				err = fmt.Errorf("%s is a symlink or not a folder: %w", p, err)
			}
			return -1, &os.PathError{Op: "open", Path: strings.Join(parts, "/"), Err: err}
		}
		fd = next
	}
	return fd, nil
}

// Kinds of file, as agentFile finds them.
const (
	kindRegular = "regular"
	kindSymlink = "symlink"
	kindFIFO    = "named pipe"
	kindSocket  = "socket"
	kindDevice  = "device"
	kindDir     = "folder"
	kindOther   = "special file"
)

// agentFile is what is at a path of a tree an agent wrote.
type agentFile struct {
	kind      string
	mode      uint32
	size      int64
	data      []byte // a regular file's first bytes (up to the limit asked)
	link      string // a symlink's target text
	truncated bool   // the file is longer than data
}

func kindOf(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return kindRegular
	case unix.S_IFLNK:
		return kindSymlink
	case unix.S_IFIFO:
		return kindFIFO
	case unix.S_IFSOCK:
		return kindSocket
	case unix.S_IFCHR, unix.S_IFBLK:
		return kindDevice
	case unix.S_IFDIR:
		return kindDir
	}
	return kindOther
}

// readAgentFile reads rel below root without following any symlink: a
// symlink gives its target text, a regular file its first max bytes
// (truncated says there is more), anything else only its kind — a named
// pipe, socket or device is never read.
func readAgentFile(root, rel string, max int) (agentFile, error) {
	parts, err := components(rel)
	if err != nil {
		return agentFile{}, err
	}
	dfd, err := walkParent(root, parts, false)
	if err != nil {
		return agentFile{}, err
	}
	defer unix.Close(dfd)
	name := parts[len(parts)-1]
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return agentFile{}, &os.PathError{Op: "lstat", Path: rel, Err: err}
	}
	f := agentFile{kind: kindOf(uint32(st.Mode)), mode: uint32(st.Mode), size: st.Size}
	switch f.kind {
	case kindSymlink:
		buf := make([]byte, 4096)
		n, err := unix.Readlinkat(dfd, name, buf)
		if err != nil {
			return f, &os.PathError{Op: "readlink", Path: rel, Err: err}
		}
		f.link = string(buf[:n])
		return f, nil
	case kindRegular:
	default:
		return f, nil
	}
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return f, &os.PathError{Op: "open", Path: rel, Err: err}
	}
	file := os.NewFile(uintptr(fd), rel)
	defer file.Close()
	// What was opened may not be what was looked at (swapped in between):
	// the open file's own kind decides.
	if err := unix.Fstat(fd, &st); err != nil {
		return f, &os.PathError{Op: "fstat", Path: rel, Err: err}
	}
	f.kind, f.mode, f.size = kindOf(uint32(st.Mode)), uint32(st.Mode), st.Size
	if f.kind != kindRegular {
		return f, nil
	}
	b, err := io.ReadAll(io.LimitReader(file, int64(max)+1))
	if err != nil {
		return f, &os.PathError{Op: "read", Path: rel, Err: err}
	}
	if len(b) > max {
		b, f.truncated = b[:max], true
	}
	f.data = b
	return f, nil
}

// readSmallFile reads a small regular file the engine trusts the place of
// (a worktree's registration in the repository's git dir), without
// following a symlink or blocking on a pipe.
func readSmallFile(path string, max int) (string, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return "", &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(max)))
	return string(b), err
}

// copyAgentFile copies rel from below src to below dst, following no
// symlink on either side: a symlink is copied as a symlink (its text), a
// regular file with its permission bits, anything else is left out (false).
// The file must not exist in dst; missing folders there are made.
func copyAgentFile(src, dst, rel string) (bool, error) {
	parts, err := components(rel)
	if err != nil {
		return false, err
	}
	sfd, err := walkParent(src, parts, false)
	if err != nil {
		return false, err
	}
	defer unix.Close(sfd)
	name := parts[len(parts)-1]
	var st unix.Stat_t
	if err := unix.Fstatat(sfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return false, &os.PathError{Op: "lstat", Path: rel, Err: err}
	}
	kind := kindOf(uint32(st.Mode))
	if kind != kindSymlink && kind != kindRegular {
		return false, nil // sockets, pipes, devices, folders: nothing to copy
	}
	dfd, err := walkParent(dst, parts, true)
	if err != nil {
		return false, err
	}
	defer unix.Close(dfd)
	if kind == kindSymlink {
		buf := make([]byte, 4096)
		n, err := unix.Readlinkat(sfd, name, buf)
		if err != nil {
			return false, &os.PathError{Op: "readlink", Path: rel, Err: err}
		}
		if err := unix.Symlinkat(string(buf[:n]), dfd, name); err != nil {
			return false, &os.PathError{Op: "symlink", Path: rel, Err: err}
		}
		return true, nil
	}
	in, err := unix.Openat(sfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return false, &os.PathError{Op: "open", Path: rel, Err: err}
	}
	inf := os.NewFile(uintptr(in), rel)
	defer inf.Close()
	if err := unix.Fstat(in, &st); err != nil {
		return false, err
	}
	if kindOf(uint32(st.Mode)) != kindRegular {
		return false, nil // swapped for something else since it was looked at
	}
	out, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(st.Mode)&0o777)
	if err != nil {
		return false, &os.PathError{Op: "create", Path: rel, Err: err}
	}
	outf := os.NewFile(uintptr(out), rel)
	if _, err := io.Copy(outf, inf); err != nil {
		outf.Close()
		return false, err
	}
	return true, outf.Close()
}
