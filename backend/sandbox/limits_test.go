package sandbox

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLimitsArgsAndWords(t *testing.T) {
	l := Limits{Processes: 256, MemoryMiB: 1024, ShmMiB: 64, Cgroup: true}
	want := []string{"--max-processes", "256", "--memory-mib", "1024", "--shm-mib", "64", "--limits-cgroup"}
	if diff := cmp.Diff(want, l.Args()); diff != "" {
		t.Error(diff)
	}
	if got := (Limits{ShmMiB: 64}).Describe(); got != "processes no limit, memory no limit, /dev/shm 64 MiB" {
		t.Error(got)
	}
	if DefaultMemoryMiB() < 256 {
		t.Errorf("default memory %d MiB", DefaultMemoryMiB())
	}
}

func TestSupportSaysWhichLimitsApply(t *testing.T) {
	r := Support{OS: "linux", Landlock: true, LandlockABI: 7, NetNS: true, Limits: LimitsRlimit, PIDLimit: true,
		LimitsNote: "no memory controller"}
	for _, want := range []string{"rlimits", "PID limit", "RLIMIT_DATA", "no cgroup: no memory controller"} {
		if !strings.Contains(r.Summary(), want) {
			t.Errorf("%q lacks %q", r.Summary(), want)
		}
	}
	if s := (Support{OS: "linux", Limits: LimitsRlimit}).LimitsSummary(); !strings.Contains(s, "not root's") {
		t.Error(s)
	}
	c := Support{OS: "linux", Limits: LimitsCgroup, CgroupBase: "/sys/fs/cgroup/shepherd"}
	if !strings.Contains(c.LimitsSummary(), "cgroup v2 (/sys/fs/cgroup/shepherd)") {
		t.Error(c.LimitsSummary())
	}
	if s := (Support{OS: "darwin", Seatbelt: true}).Summary(); !strings.Contains(s, "no per-box process or memory limits") {
		t.Error(s)
	}
}

func TestSeatbeltKeepsProtectedPaths(t *testing.T) {
	p := SeatbeltProfile(Grants{WriteDirs: []string{"/Users/me/repo"}}, "", nil, []string{"/Users/me/repo/.git", "/Users/me/.claude/settings.json"})
	deny := strings.Index(p, "(deny file-write*\n  (subpath \"/Users/me/repo/.git\")\n  (subpath \"/Users/me/.claude/settings.json\")\n)")
	if deny < 0 || deny < strings.Index(p, `(subpath "/Users/me/repo")`) {
		t.Errorf("the read-only paths are not denied after the grants:\n%s", p)
	}
}
