// Package jail is the box a sandboxed agent runs in on Linux, built the way
// bubblewrap builds one: new user, PID, IPC and UTS namespaces, a mount
// namespace in which the whole file system is re-mounted read-only, nosuid
// and nodev with only the granted folders bound writable, Shepherd's own
// folders and the host's Unix sockets hidden, a /dev and a /proc of its
// own; a network namespace of its own without @network; inside the grants,
// the git dirs and the agent CLIs' configuration kept read-only
// (sandbox.Protect, FindRepos); limits on its processes, memory and
// /dev/shm; no capabilities, no_new_privs; then Landlock on top (package
// restrict): the same write rules, and signal and abstract socket scoping;
// a session keyring of its own; and a seccomp filter (package seccomp).
//
// The engine starts the agent's shim already in the box's user, PID, IPC
// and UTS namespaces (ShimAttr): the shim is PID 1 of the box, so when it
// dies — a stop that kills it, or anything else — the kernel kills
// everything left in the box, even what the agent moved to a session of its
// own. The shim stays in the host's mount and network namespaces, where it
// writes the agent's status; the box's own mount (and network) namespace,
// the dropped privileges and Landlock are made on one thread of the shim,
// from which the agent is started (Begin, Build): they are the agent's,
// never the shim's. No second process is started to build the box.
package jail

import "shepherd/backend/sandbox"

// Config is the box of one agent: what it may write, what it must not see,
// and what runs in it.
type Config struct {
	Grants sandbox.Grants
	// Hide are folders no sandbox may see: Shepherd's data, state, config
	// and runtime folders (the API token, the records, every agent's log).
	Hide []string
	// Sockets are the host's pathname Unix sockets (HostSockets): each is
	// covered so that nothing inside can connect to it.
	Sockets []string
	// ReadOnly are paths inside the grants the box keeps read-only
	// (sandbox.Protection's); ScanRepos adds the repositories nested in the
	// grants (sandbox.FindRepos).
	ReadOnly  []string
	ScanRepos bool
	Limits    sandbox.Limits
	Path      string
	Argv      []string
	Dir       string
	Env       []string
}
