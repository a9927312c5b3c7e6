package sandbox

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnavailable is the kind of a sandbox this machine cannot enforce.
var ErrUnavailable = errors.New("sandbox unavailable")

// Support is what this machine can enforce, found once by Detect.
type Support struct {
	OS string `json:"os"`
	// Linux: Landlock (filesystem rules, and from ABI 6 signal and
	// abstract-socket scoping) and its ABI version, and the box's
	// namespaces (user, mount, PID, IPC, network: NetNS is all of them,
	// proved by building one).
	Landlock      bool   `json:"landlock"`
	LandlockABI   int    `json:"landlockAbi,omitempty"`
	LandlockError string `json:"landlockError,omitempty"`
	NetNS         bool   `json:"netns"`
	NetNSError    string `json:"netnsError,omitempty"`
	// macOS: sandbox-exec (Seatbelt).
	Seatbelt      bool   `json:"seatbelt"`
	SeatbeltError string `json:"seatbeltError,omitempty"`
	// Limits is how a box's process, memory and /dev/shm limits are
	// enforced: LimitsCgroup (a cgroup of its own below CgroupBase) or
	// LimitsRlimit (LimitsNote says why there is no cgroup; PIDLimit, that
	// the kernel also caps the tasks of the box's PID namespace, which
	// counts root's too); "" where there are none (macOS).
	Limits     string `json:"limits,omitempty"`
	CgroupBase string `json:"cgroupBase,omitempty"`
	LimitsNote string `json:"limitsNote,omitempty"`
	PIDLimit   bool   `json:"pidLimit,omitempty"`
}

// Check says what of g this machine cannot enforce; nil when it can all be.
// Writes are restricted for every sandbox, so the filesystem mechanism is
// always needed; the network one only when g has no @network.
func (s Support) Check(g Grants) error {
	var missing []string
	switch s.OS {
	case "darwin":
		if !s.Seatbelt {
			missing = append(missing, "sandbox-exec (Seatbelt): "+orUnknown(s.SeatbeltError))
		}
	case "linux":
		if !s.Landlock {
			missing = append(missing, "Landlock, which keeps writes to the granted folders: "+orUnknown(s.LandlockError))
		}
		if s.Landlock && g.Network && s.LandlockABI < 6 {
			missing = append(missing, fmt.Sprintf("Landlock ABI 6 (this kernel has %d), which keeps an agent with the network from the abstract Unix sockets of the host (Linux 6.12 or newer)", s.LandlockABI))
		}
		if !s.NetNS {
			missing = append(missing, "the sandbox's namespaces (user, mount, PID, IPC and network), which make the file system read-only, hide Shepherd's folders and the host's processes, and take the network away: "+orUnknown(s.NetNSError))
		}
	default:
		missing = append(missing, "a sandbox for "+s.OS+" (Shepherd sandboxes on Linux and macOS)")
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w: this machine lacks %s", ErrUnavailable, strings.Join(missing, "; and "))
}

// Summary is one line for people: what works, what does not.
func (s Support) Summary() string {
	switch s.OS {
	case "linux":
		fs := "Landlock ABI " + fmt.Sprint(s.LandlockABI)
		if !s.Landlock {
			fs = "no Landlock (" + orUnknown(s.LandlockError) + ")"
		}
		nw := "user, mount, PID, IPC and network namespaces"
		if !s.NetNS {
			nw = "no sandbox namespaces (" + orUnknown(s.NetNSError) + ")"
		}
		return fs + "; " + nw + "; " + s.LimitsSummary()
	case "darwin":
		if s.Seatbelt {
			return "sandbox-exec (Seatbelt); " + s.LimitsSummary()
		}
		return "no sandbox-exec (" + orUnknown(s.SeatbeltError) + ")"
	}
	return "no sandbox on " + s.OS
}

// LimitsSummary says how a box's limits are enforced here.
func (s Support) LimitsSummary() string {
	switch s.Limits {
	case LimitsCgroup:
		return "per-box limits by cgroup v2 (" + s.CgroupBase + ")"
	case LimitsRlimit:
		procs := "processes by RLIMIT_NPROC (not root's)"
		if s.PIDLimit {
			procs = "processes by the box's PID limit and RLIMIT_NPROC"
		}
		out := "per-box limits by rlimits: " + procs + ", memory per process by RLIMIT_DATA, /dev/shm by its size"
		if s.LimitsNote != "" {
			out += " (no cgroup: " + s.LimitsNote + ")"
		}
		return out
	}
	return "no per-box process or memory limits"
}

// Full reports whether every grant can be enforced here.
func (s Support) Full() bool { return s.Check(Grants{}) == nil }

func orUnknown(s string) string {
	if s == "" {
		return "reason unknown"
	}
	return s
}
