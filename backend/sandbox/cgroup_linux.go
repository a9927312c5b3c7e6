package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// cgroupFS is where the kernel's files are read (tests point it at a copy).
var cgroupFS = struct{ mountinfo, self string }{"/proc/self/mountinfo", "/proc/self/cgroup"}

// DetectCgroup finds the cgroup v2 in which the engine may make a cgroup
// per box, with the memory and pids controllers: the hierarchy's root when
// the engine runs as root, or the user's delegated subtree of a systemd
// user session (user@UID.service) when the engine runs in it. It makes
// that folder (shepherd, with both controllers for its children) and
// returns it; or "" and why there is none.
func DetectCgroup() (base, why string) {
	mnt, root, err := cgroup2Mount()
	if err != nil {
		return "", err.Error()
	}
	own, err := ownCgroup()
	if err != nil {
		return "", err.Error()
	}
	rel := strings.TrimPrefix(own, root)
	var parent string
	if os.Geteuid() == 0 {
		parent = mnt
	} else {
		sub, ok := userService(rel, os.Getuid())
		if !ok {
			return "", fmt.Sprintf("the engine runs as uid %d outside a systemd user session's delegated cgroup (its cgroup is %s)", os.Getuid(), own)
		}
		parent = filepath.Join(mnt, sub)
	}
	if err := enableControllers(parent); err != nil {
		return "", err.Error()
	}
	base = filepath.Join(parent, "shepherd")
	if err := os.Mkdir(base, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Sprintf("make %s: %v", base, err)
	}
	if err := enableControllers(base); err != nil {
		return "", err.Error()
	}
	// Proved by making a box's cgroup with limits, and removing it.
	probe, err := NewBoxCgroup(base, "probe", Limits{Processes: 64, MemoryMiB: 64})
	if err != nil {
		return "", err.Error()
	}
	_ = os.Remove(probe)
	return base, ""
}

// userService is the cgroup of uid's systemd user manager (user@UID.service,
// delegated to the user) that rel, a cgroup, lies in.
func userService(rel string, uid int) (string, bool) {
	unit := "/user@" + strconv.Itoa(uid) + ".service"
	i := strings.Index(rel+"/", unit+"/")
	if i < 0 {
		return "", false
	}
	return rel[:i+len(unit)], true
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted, and the cgroup
// its mount shows as its root.
func cgroup2Mount() (mnt, root string, err error) {
	f, err := os.Open(cgroupFS.mountinfo)
	if err != nil {
		return "", "", fmt.Errorf("read the mounts: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if fs := strings.Fields(pre); len(fs) >= 5 {
			return fs[4], fs[3], nil
		}
	}
	return "", "", errors.New("no cgroup v2 hierarchy is mounted")
}

// ownCgroup is the engine's cgroup v2 ("0::" in /proc/self/cgroup).
func ownCgroup() (string, error) {
	b, err := os.ReadFile(cgroupFS.self)
	if err != nil {
		return "", fmt.Errorf("read the engine's cgroup: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p, nil
		}
	}
	return "", errors.New("the engine is in no cgroup v2")
}

// enableControllers makes memory and pids available to dir's children.
func enableControllers(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("cgroup %s: %v", dir, err)
	}
	have := strings.Fields(string(b))
	for _, c := range []string{"memory", "pids"} {
		if !contains(have, c) {
			return fmt.Errorf("the cgroup v2 at %s has no %s controller (controllers: %q)", dir, c, strings.TrimSpace(string(b)))
		}
	}
	sub, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if on := strings.Fields(string(sub)); contains(on, "memory") && contains(on, "pids") {
		return nil
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory +pids"), 0); err != nil {
		return fmt.Errorf("enable the memory and pids controllers below %s: %v", dir, err)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// NewBoxCgroup makes a cgroup below base for one box, named after name,
// with l's process and memory limits (and no swap when memory is limited),
// and returns its path.
func NewBoxCgroup(base, name string, l Limits) (string, error) {
	dir := filepath.Join(base, fmt.Sprintf("%s-%08x", safeName(name), rand.Uint32()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("make the box's cgroup: %v", err)
	}
	val := func(n int, unit int64) string {
		if n <= 0 {
			return "max"
		}
		return strconv.FormatInt(int64(n)*unit, 10)
	}
	writes := [][2]string{{"pids.max", val(l.Processes, 1)}, {"memory.max", val(l.MemoryMiB, 1<<20)}}
	for _, w := range writes {
		if err := os.WriteFile(filepath.Join(dir, w[0]), []byte(w[1]), 0); err != nil {
			_ = os.Remove(dir)
			return "", fmt.Errorf("set %s of the box's cgroup: %v", w[0], err)
		}
	}
	if l.MemoryMiB > 0 {
		// Absent without swap accounting: nothing to cap then.
		_ = os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0)
	}
	return dir, nil
}

// OpenCgroup opens a box's cgroup for starting its shim in it.
func OpenCgroup(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open the box's cgroup: %w", err)
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// SweepCgroups removes the cgroups below base whose boxes are gone (the
// kernel refuses to remove one that still has a process).
func SweepCgroups(base string) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.IsDir() {
			_ = unix.Rmdir(filepath.Join(base, e.Name()))
		}
	}
}

func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}

func totalMemoryMiB() int {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return int(uint64(si.Totalram) * uint64(si.Unit) >> 20)
}
