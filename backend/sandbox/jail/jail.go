// Package jail is the box a sandboxed agent runs in on Linux, built the way
// bubblewrap builds one: new user, mount, PID, IPC and UTS namespaces (and a
// network namespace without @network); the whole file system re-mounted
// read-only, nosuid and nodev, with only the granted folders bound writable;
// Shepherd's own folders and the host's Unix sockets hidden; a /dev of its
// own; a /proc of its own; no capabilities, no_new_privs; then Landlock on
// top (package restrict): the same write rules, and signal and abstract
// socket scoping.
//
// The shim starts its own executable in those namespaces (Init). That
// process is PID 1 of the box: it builds the box, starts the agent, reaps
// what is orphaned inside, and when it dies the kernel kills everything
// left in the box — so a stop that kills it leaves nothing behind, even what
// the agent moved to a session of its own.
package jail

import (
	"encoding/json"
	"time"

	"shepherd/backend/sandbox"
)

// Config is what the shim hands the box's init, as JSON on its config pipe.
type Config struct {
	Grants sandbox.Grants `json:"grants"`
	// Hide are folders no sandbox may see: Shepherd's data, state, config
	// and runtime folders (the API token, the records, every agent's log).
	Hide []string `json:"hide,omitempty"`
	// Sockets are the host's pathname Unix sockets, found by the shim
	// before the box existed (from inside, a new network namespace lists
	// none): each is covered so that nothing inside can connect to it.
	Sockets []string `json:"sockets,omitempty"`
	// Probe builds the box and exits 0 without running anything: how the
	// engine learns that this machine can build one.
	Probe bool          `json:"probe,omitempty"`
	Path  string        `json:"path,omitempty"`
	Argv  []string      `json:"argv,omitempty"`
	Dir   string        `json:"dir,omitempty"`
	Env   []string      `json:"env,omitempty"`
	Grace time.Duration `json:"grace,omitempty"`
}

// Report is a line the init writes on its report pipe: that the box is
// ready (or why it could not be built), that the agent started (or why
// not), and how the agent ended.
type Report struct {
	Ready   bool   `json:"ready,omitempty"` // the box is built; waiting for the go-ahead
	Started bool   `json:"started,omitempty"`
	Error   string `json:"error,omitempty"`
	Exit    *Exit  `json:"exit,omitempty"`
}

// Exit is how the agent ended: its exit code, or the signal that killed it.
type Exit struct {
	Code   *int   `json:"code,omitempty"`
	Signal string `json:"signal,omitempty"`
}

// Encode renders r as one line.
func (r Report) Encode() []byte {
	b, _ := json.Marshal(r)
	return append(b, '\n')
}
