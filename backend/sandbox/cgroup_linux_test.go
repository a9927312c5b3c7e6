package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The cgroup logic against a copy of the kernel's files (the kernel's own
// behaviour — delegation, CLONE_INTO_CGROUP — needs a machine with a
// cgroup v2 that has the controllers).
func TestDetectCgroupAndBoxCgroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the root case; a user session's needs its delegated cgroup")
	}
	dir := t.TempDir()
	mnt := filepath.Join(dir, "cgroup")
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "mountinfo"), "24 1 0:21 / /proc rw - proc proc rw\n30 25 0:26 / "+mnt+" rw,nosuid - cgroup2 cgroup2 rw\n")
	write(filepath.Join(dir, "self"), "0::/system.slice/x.service\n")
	old := cgroupFS
	defer func() { cgroupFS = old }()
	cgroupFS.mountinfo, cgroupFS.self = filepath.Join(dir, "mountinfo"), filepath.Join(dir, "self")

	write(filepath.Join(mnt, "cgroup.controllers"), "cpu io hugetlb")
	if base, why := DetectCgroup(); base != "" || !strings.Contains(why, "no memory controller") {
		t.Fatalf("without controllers: %q %q", base, why)
	}
	write(filepath.Join(mnt, "cgroup.controllers"), "cpu memory pids")
	write(filepath.Join(mnt, "cgroup.subtree_control"), "")
	// A real cgroupfs fills a new cgroup's files; a plain folder has none,
	// so the new base (shepherd) is refused here — after the controllers
	// were enabled below the root.
	_, why := DetectCgroup()
	if b, _ := os.ReadFile(filepath.Join(mnt, "cgroup.subtree_control")); string(b) != "+memory +pids" {
		t.Errorf("controllers not enabled below the root: %q (%s)", b, why)
	}
	if why == "" {
		t.Error("a cgroup without its files was taken")
	}

	base := filepath.Join(dir, "base")
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	// NewBoxCgroup writes into the files the kernel made: stand them in.
	cg, err := NewBoxCgroup(base, "a/b", Limits{Processes: 100, MemoryMiB: 0})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(cg), "a_b-") {
		t.Errorf("name %s", cg)
	}
	for f, want := range map[string]string{"pids.max": "100", "memory.max": "max"} {
		if b, _ := os.ReadFile(filepath.Join(cg, f)); string(b) != want {
			t.Errorf("%s = %q, want %q", f, b, want)
		}
	}
	if _, err := os.Stat(filepath.Join(cg, "memory.swap.max")); err == nil {
		t.Error("swap capped without a memory limit")
	}
	SweepCgroups(base) // a plain folder with files: not removed, as a live cgroup would not be
	if _, err := os.Stat(cg); err != nil {
		t.Error(err)
	}
}

func TestUserService(t *testing.T) {
	for rel, want := range map[string]string{
		"/user.slice/user-1000.slice/user@1000.service/app.slice/app-x.scope": "/user.slice/user-1000.slice/user@1000.service",
		"/user.slice/user-1000.slice/user@1000.service":                       "/user.slice/user-1000.slice/user@1000.service",
		"/user.slice/user-1000.slice/session-2.scope":                         "",
		"/user.slice/user-1000.slice/user@10000.service/app.slice":            "",
	} {
		got, ok := userService(rel, 1000)
		if got != want || ok != (want != "") {
			t.Errorf("%s: %q %v", rel, got, ok)
		}
	}
}
