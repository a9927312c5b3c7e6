package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrDenied is the kind of a grant beyond what its caller holds.
var ErrDenied = errors.New("permission denied")

// Holder is what a caller may grant (seed 001: tags are "validated against
// caller permissions"). The user holds everything; an agent holds its own
// grants — an unsandboxed one, the network and writes in its cwd.
type Holder struct {
	All       bool // the user: window, CLI, API token
	Name      string
	Network   bool
	WriteDirs []string
}

// User holds every grant.
func User() Holder { return Holder{All: true, Name: "the user"} }

// AgentHolder is what the agent named name holds: its sandbox's grants when
// it is sandboxed (g != nil), else the network and writes in its cwd.
func AgentHolder(name string, g *Grants, cwd string) Holder {
	if g == nil {
		if real, err := filepath.EvalSymlinks(cwd); err == nil {
			cwd = real
		}
		return Holder{Name: name, Network: true, WriteDirs: []string{cwd}}
	}
	return Holder{Name: name, Network: g.Network, WriteDirs: append([]string{}, g.WriteDirs...)}
}

// Check refuses the first of g's grants that h does not hold, naming it.
func (h Holder) Check(g Grants) error {
	if h.All {
		return nil
	}
	if g.Network && !h.Network {
		return fmt.Errorf("%w: %s cannot grant @network: it has no network itself", ErrDenied, h.Name)
	}
	for _, d := range g.WriteDirs {
		ok := false
		for _, mine := range h.WriteDirs {
			if under(d, mine) {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("%w: %s cannot grant %s%s: it may write only in %s", ErrDenied, h.Name, TagWritePrefix, d, holdList(h.WriteDirs))
		}
	}
	return nil
}

func holdList(dirs []string) string {
	if len(dirs) == 0 {
		return "no folder"
	}
	return strings.Join(dirs, ", ")
}
