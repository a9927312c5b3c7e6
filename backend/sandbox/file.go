package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"shepherd/backend/jsonone"
	"slices"

	"github.com/google/renameio/v2"
)

// FileName is the grants' file next to an agent's record.
const FileName = "sandbox.json"

// Save writes g to path atomically, readable by its owner only.
func Save(path string, g Grants) error {
	if g.WriteDirs == nil {
		g.WriteDirs = []string{}
	}
	if g.Permissions == nil {
		g.Permissions = []string{}
	}
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return renameio.WriteFile(path, append(b, '\n'), 0o600, renameio.WithStaticPermissions(0o600))
}

// Load reads the grants at path. A file that is missing, unreadable or not
// exactly what Save writes is an error: a sandbox is never guessed.
func Load(path string) (Grants, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Grants{}, err
	}
	return Decode(b)
}

// Decode parses sandbox.json's content strictly: one object, known fields,
// absolute clean folders.
func Decode(b []byte) (Grants, error) {
	var g Grants
	if err := jsonone.Decode(b, &g, true); err != nil {
		return Grants{}, fmt.Errorf("%s: %w", FileName, err)
	}
	if g.WriteDirs == nil {
		g.WriteDirs = []string{}
	}
	if g.Permissions == nil {
		g.Permissions = []string{}
	}
	for _, d := range g.WriteDirs {
		if !filepath.IsAbs(d) || filepath.Clean(d) != d {
			return Grants{}, fmt.Errorf("%s: write folder %q is not an absolute clean path", FileName, d)
		}
	}
	return g, nil
}

// Equal reports whether a and b grant the same.
func Equal(a, b *Grants) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Network == b.Network && slices.Equal(a.WriteDirs, b.WriteDirs) && slices.Equal(a.Permissions, b.Permissions)
}
