package shim

// SpawnerFlag runs the shim's executable as the engine's spawner of boxed
// shims (Linux): a small process of its own, started once, that starts each
// sandboxed agent's shim in the box's namespaces on the engine's behalf.
// Starting a process in a new user namespace cannot share the starter's
// memory while it starts (a vfork), so it copies the starter's page tables:
// from the engine that costs about a millisecond per 10 MiB it holds, from
// the spawner a fraction of one. The shim it starts is the engine's child
// all the same (CLONE_PARENT).
//
// The engine talks to it on a SOCK_SEQPACKET socket (descriptor 3): a
// SpawnRequest with three descriptors — the shim's stderr (the agent's
// log), its status pipe and its go-ahead pipe — and, with Cgroup, a fourth:
// the box's cgroup, which the shim is started in; and a SpawnReply back.
const SpawnerFlag = "--spawner"

// SpawnRequest asks the spawner to start a boxed shim.
type SpawnRequest struct {
	Argv    []string `json:"argv"` // the shim's command line, argv[0] included
	Env     []string `json:"env"`
	Dir     string   `json:"dir"`
	Network bool     `json:"network"` // the agent has @network
	Cgroup  bool     `json:"cgroup,omitempty"`
}

// SpawnReply is the started shim's pid, or why it could not be started.
type SpawnReply struct {
	PID   int    `json:"pid,omitempty"`
	Error string `json:"error,omitempty"`
}
