// Package sandbox is the permission sandbox of seed 001: which grants an
// agent has (its permission tags), who may grant what (caller permissions),
// whether this machine can enforce them (support), and how they are enforced
// (Landlock and a network namespace on Linux, a Seatbelt profile on macOS).
//
// An agent with no grants may read everywhere but write nowhere except its
// own log, and has no network. The tags add to that baseline:
//
//	@network          the host's network
//	@write:<folder>   writes in an absolute, existing folder and below
//	@read:<anything>  accepted and ignored: reads are always allowed
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Tag names.
const (
	TagNetwork     = "@network"
	TagWritePrefix = "@write:"
	TagReadPrefix  = "@read:"
)

// ErrInvalid is the kind of every validation error of a tag.
var ErrInvalid = errors.New("invalid permission")

// Grants are what a sandboxed agent may do beyond the baseline. It is also
// the content of sandbox.json (seed 001's network and writeDirs, and the
// tags they came from).
type Grants struct {
	Network     bool     `json:"network"`
	WriteDirs   []string `json:"writeDirs"`
	Permissions []string `json:"permissions"` // the tags, cleaned, as stored and shown
}

// Parse validates tags and returns the grants they make. Every error names
// the tag that was wrong. Paths are cleaned, must be absolute folders that
// exist, and are resolved to the real folder (symlinks followed). Duplicates are dropped; @read: tags are kept in Permissions
// (they were asked for) but grant nothing.
func Parse(tags []string) (Grants, error) {
	g := Grants{WriteDirs: []string{}, Permissions: []string{}}
	for _, raw := range tags {
		tag := strings.TrimSpace(raw)
		switch {
		case tag == TagNetwork:
			g.Network = true
		case strings.HasPrefix(tag, TagReadPrefix):
			// Reads are allowed everywhere; nothing to grant.
		case strings.HasPrefix(tag, TagWritePrefix):
			dir := strings.TrimPrefix(tag, TagWritePrefix)
			if dir == "" {
				return Grants{}, fmt.Errorf("%w %q: @write: needs an absolute folder, e.g. @write:/home/me/project", ErrInvalid, raw)
			}
			if !filepath.IsAbs(dir) {
				return Grants{}, fmt.Errorf("%w %q: the folder must be an absolute path", ErrInvalid, raw)
			}
			dir = filepath.Clean(dir)
			// Resolved once, to the real folder: a symlink on the path (in a
			// granted folder, or swapped in later) never widens a grant.
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			fi, err := os.Stat(dir)
			switch {
			case errors.Is(err, os.ErrNotExist):
				return Grants{}, fmt.Errorf("%w %q: %s does not exist", ErrInvalid, raw, dir)
			case err != nil:
				return Grants{}, fmt.Errorf("%w %q: %v", ErrInvalid, raw, err)
			case !fi.IsDir():
				return Grants{}, fmt.Errorf("%w %q: %s is not a folder", ErrInvalid, raw, dir)
			}
			tag = TagWritePrefix + dir
			if !slices.Contains(g.WriteDirs, dir) {
				g.WriteDirs = append(g.WriteDirs, dir)
			}
		case tag == "":
			return Grants{}, fmt.Errorf("%w: an empty tag (use @network, @write:<absolute folder> or @read:*)", ErrInvalid)
		default:
			return Grants{}, fmt.Errorf("%w %q: unknown tag (use @network, @write:<absolute folder> or @read:*)", ErrInvalid, raw)
		}
		if !slices.Contains(g.Permissions, tag) {
			g.Permissions = append(g.Permissions, tag)
		}
	}
	return g, nil
}

// Describe says in plain words what g allows, for people.
func (g Grants) Describe() string {
	var parts []string
	if g.Network {
		parts = append(parts, "network")
	} else {
		parts = append(parts, "no network")
	}
	if len(g.WriteDirs) == 0 {
		parts = append(parts, "no writes but its log")
	} else {
		parts = append(parts, "writes in "+strings.Join(g.WriteDirs, ", "))
	}
	return strings.Join(parts, ", ")
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}
