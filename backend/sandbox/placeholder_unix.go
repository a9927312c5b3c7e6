//go:build unix

package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// MakePlaceholders makes each placeholder that is still missing, without
// following a symlink on the way: an empty folder (0700), or a file (0600)
// with its content. A name that exists by now (anything, a symlink
// included) is left as it is. Only for a request that passed every check.
func MakePlaceholders(ms []Placeholder) error {
	for _, m := range ms {
		if err := makePlaceholder(m); err != nil {
			return fmt.Errorf("make %s: %w", m.Path, err)
		}
	}
	return nil
}

func makePlaceholder(m Placeholder) error {
	parent, err := openDirNoFollow(filepath.Dir(m.Path))
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	name := filepath.Base(m.Path)
	if m.Dir {
		err = unix.Mkdirat(parent, name, 0o700)
	} else {
		var fd int
		fd, err = unix.Openat(parent, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == nil {
			if m.Content != "" {
				_, err = unix.Write(fd, []byte(m.Content))
			}
			if cerr := unix.Close(fd); err == nil {
				err = cerr
			}
		}
	}
	if errors.Is(err, unix.EEXIST) {
		return nil
	}
	return err
}

// openDirNoFollow opens the folder dir (absolute) one component at a time,
// refusing any symlink on the way.
func openDirNoFollow(dir string) (int, error) {
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for _, c := range strings.Split(strings.Trim(filepath.Clean(dir), "/"), "/") {
		if c == "" {
			continue
		}
		next, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
				return -1, fmt.Errorf("%s is not a real folder (a symlink stands on its path)", dir)
			}
			return -1, err
		}
		fd = next
	}
	return fd, nil
}
