package jail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// devices are bound into the box's own /dev from the host's.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// procCovers are the parts of the box's /proc bound read-only over
// themselves, as bubblewrap does: an agent running as the host's root
// (without capabilities) still owns them by uid, and some write handlers
// check nothing more (sysrq-trigger, a few sysctls).
var procCovers = []string{"sys", "sysrq-trigger", "irq", "bus", "fs", "acpi", "scsi"}

// procMasks are files of the box's /proc covered by /dev/null, as Docker
// masks them: the keys of the user's keyrings (their descriptions show
// there, through the user's own permission, without any keyring call), and
// the kernel's timers, scheduler and memory.
var procMasks = []string{"keys", "key-users", "timer_list", "sched_debug", "kcore", "latency_stats"}

// buildMounts makes the box's file system; readOnly says what in the
// grants it keeps read-only. It runs on the box's thread, in
// its new mount namespace owned by the box's user namespace (so every change
// stays inside, and the host's mounts copied in are locked: nothing inside
// can undo them later, even from a nested namespace).
func buildMounts(cfg Config, readOnly func() []string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	// The host's device nodes, taken before /dev is covered.
	devFDs := map[string]int{}
	for _, d := range devices {
		fd, err := unix.OpenTree(unix.AT_FDCWD, "/dev/"+d, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err == nil {
			devFDs[d] = fd
		}
	}
	// The grants, resolved without following any symlink: a path that is
	// (or passes through) a symlink now is refused, never followed.
	grantFDs := make([]int, 0, len(cfg.Grants.WriteDirs))
	for _, d := range cfg.Grants.WriteDirs {
		fd, err := unix.Openat2(unix.AT_FDCWD, d, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err != nil {
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
				return fmt.Errorf("the granted folder %s is no longer a real folder (a symlink now stands on its path): not followed", d)
			}
			return fmt.Errorf("the granted folder %s: %w", d, err)
		}
		grantFDs = append(grantFDs, fd)
	}
	// Everything read-only, without device files or set-user-id.
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{
		Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOSUID}); err != nil {
		return fmt.Errorf("re-mount the file system read-only (mount_setattr needs Linux 5.12): %w", err)
	}
	if err := buildDev(devFDs, cfg.Limits.ShmMiB); err != nil {
		return err
	}
	if err := buildProc(); err != nil {
		return err
	}
	// The grants, writable: each folder bound on itself, and only that
	// mount made writable (mounts below it stay as they were, read-only).
	for i, fd := range grantFDs {
		d := cfg.Grants.WriteDirs[i]
		tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_EMPTY_PATH)
		if err != nil {
			return fmt.Errorf("bind the granted folder %s: %w", d, err)
		}
		if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, &unix.MountAttr{
			Attr_clr: unix.MOUNT_ATTR_RDONLY, Attr_set: unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOSUID}); err != nil {
			return fmt.Errorf("make the granted folder %s writable (is it on a read-only file system?): %w", d, err)
		}
		if err := unix.MoveMount(tree, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
			return fmt.Errorf("bind the granted folder %s: %w", d, err)
		}
		unix.Close(tree)
		unix.Close(fd)
	}
	// Inside the grants, what the box must not write: bound read-only after
	// the grants (on top of them), before Shepherd's folders are hidden.
	for _, p := range readOnly() {
		if err := bindReadOnly(p); err != nil {
			return err
		}
	}
	// Shepherd's folders: an empty read-only folder over each, after the
	// grants, so a grant above them does not show them.
	for _, d := range cfg.Hide {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0755"); err != nil {
			return fmt.Errorf("hide %s: %w", d, err)
		}
	}
	// The host's Unix sockets: the session bus, the user's services and
	// agents. A socket's file cannot be made unconnectable by a read-only
	// mount, so each is covered by /dev/null (not a socket: connect fails).
	for _, s := range cfg.Sockets {
		fi, err := os.Lstat(s)
		if err != nil || fi.Mode()&os.ModeSocket == 0 {
			continue
		}
		if err := unix.Mount("/dev/null", s, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("cover the socket %s: %w", s, err)
		}
	}
	return nil
}

// bindReadOnly binds p, read-only, on itself. p is opened without
// following any symlink on its path; a symlink is pinned as itself (it can
// then be neither removed, renamed nor replaced).
func bindReadOnly(p string) error {
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	switch {
	case errors.Is(err, unix.ENOENT):
		return fmt.Errorf("%s vanished before the box could keep it read-only; start the agent again", p)
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR):
		return fmt.Errorf("%s is no longer a real path (a symlink now stands on it): not followed", p)
	case err != nil:
		return fmt.Errorf("keep %s read-only: %w", p, err)
	}
	defer unix.Close(fd)
	tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_EMPTY_PATH)
	if err != nil {
		return fmt.Errorf("keep %s read-only: %w", p, err)
	}
	defer unix.Close(tree)
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{
		Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOSUID}); err != nil {
		return fmt.Errorf("keep %s read-only: %w", p, err)
	}
	if err := unix.MoveMount(tree, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("keep %s read-only: %w", p, err)
	}
	return nil
}

// buildDev mounts a /dev of the box's own: a few device nodes bound from
// the host's, a new pseudo-terminal instance and a private /dev/shm of
// shmMiB (0: the kernel's default size, half the memory).
func buildDev(devFDs map[string]int, shmMiB int) error {
	if err := unix.Mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("mount the box's /dev: %w", err)
	}
	for _, d := range devices {
		fd, ok := devFDs[d]
		if !ok {
			continue
		}
		p := "/dev/" + d
		if err := os.WriteFile(p, nil, 0o666); err != nil {
			return fmt.Errorf("make %s: %w", p, err)
		}
		if err := unix.MoveMount(fd, "", unix.AT_FDCWD, p, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("bind %s: %w", p, err)
		}
		_ = unix.MountSetattr(unix.AT_FDCWD, p, 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NOEXEC})
		unix.Close(fd)
	}
	for _, d := range []string{"/dev/pts", "/dev/shm"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("make %s: %w", d, err)
		}
	}
	// A pseudo-terminal instance of the box's own (programs that open a pty
	// work); not fatal where the kernel refuses it.
	if unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620") == nil {
		_ = os.Symlink("pts/ptmx", "/dev/ptmx")
	}
	// Also the agent's TMPDIR (sandbox.BoxTmp): programs run what they put
	// there (test binaries, scripts), so it is not noexec. Its size caps
	// its pages; its inodes (kernel memory the size does not count) are
	// capped at one per 4 KiB of it.
	shmOpts := "mode=1777"
	if shmMiB > 0 {
		shmOpts += fmt.Sprintf(",size=%dm,nr_inodes=%d", shmMiB, shmMiB*256)
	}
	if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, shmOpts); err != nil {
		return fmt.Errorf("mount the box's /dev/shm: %w", err)
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		_ = os.Symlink(target, filepath.Join("/dev", name))
	}
	// Nothing new is made in /dev afterwards.
	if err := unix.MountSetattr(unix.AT_FDCWD, "/dev", 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("make the box's /dev read-only: %w", err)
	}
	return nil
}

// buildProc mounts a /proc of the box's PID namespace (only the box's
// processes are in it) with its dangerous parts read-only.
func buildProc() error {
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount the box's /proc: %w", err)
	}
	for _, c := range procCovers {
		p := "/proc/" + c
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("cover %s: %w", p, err)
		}
		if err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE, &unix.MountAttr{
			Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}); err != nil {
			return fmt.Errorf("make %s read-only: %w", p, err)
		}
	}
	for _, m := range procMasks {
		p := "/proc/" + m
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := unix.Mount("/dev/null", p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("mask %s: %w", p, err)
		}
	}
	return nil
}
