package bootstrap

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrNoBuild: this Shepherd has no engine for the host's OS and
// architecture — the host needs a newer engine than Shepherd can give it.
var ErrNoBuild = errors.New("needs a newer engine")

// Engine and shim file names, on every platform.
const (
	EngineFile = "shepherd-engine"
	ShimFile   = "shepherd-shim"
)

// Platform is an OS and an architecture, named as Go names them.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// ParseUname reads `uname -sm` ("Linux x86_64", "Darwin arm64").
func ParseUname(s string) (Platform, error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return Platform{}, fmt.Errorf("uname -sm said %q, not an OS and an architecture", s)
	}
	var p Platform
	switch strings.ToLower(f[0]) {
	case "linux":
		p.OS = "linux"
	case "darwin":
		p.OS = "darwin"
	default:
		p.OS = strings.ToLower(f[0])
	}
	switch f[1] {
	case "x86_64", "amd64":
		p.Arch = "amd64"
	case "aarch64", "arm64", "aarch64_be":
		p.Arch = "arm64"
	case "i386", "i486", "i586", "i686":
		p.Arch = "386"
	default:
		p.Arch = strings.ToLower(f[1])
	}
	for _, r := range p.OS + p.Arch {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return Platform{}, fmt.Errorf("uname -sm said %q, not an OS and an architecture", s)
		}
	}
	return p, nil
}

// Builds are the engines this Shepherd can install on hosts:
// Dir/<os>-<arch>/shepherd-engine and shepherd-shim, static (no cgo), as
// scripts/lib.sh's build_host_engines makes them.
type Builds struct {
	Dir string
	// Version is this Shepherd's version (the engines' cli.Version).
	Version string
}

// Build is one platform's engine and shim.
type Build struct {
	Platform
	Engine, Shim string // local paths
	// ID names the build: its version and the hash of both binaries, so a
	// rebuilt engine of the same version is another build.
	ID string
}

// Platforms are the platforms Dir has a build for.
func (b Builds) Platforms() []Platform {
	ents, _ := os.ReadDir(b.Dir)
	var out []Platform
	for _, e := range ents {
		osName, arch, ok := strings.Cut(e.Name(), "-")
		if !ok || !e.IsDir() {
			continue
		}
		if isFile(filepath.Join(b.Dir, e.Name(), EngineFile)) && isFile(filepath.Join(b.Dir, e.Name(), ShimFile)) {
			out = append(out, Platform{osName, arch})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// For is the build for p, or an error wrapping ErrNoBuild.
func (b Builds) For(p Platform) (Build, error) {
	dir := filepath.Join(b.Dir, p.OS+"-"+p.Arch)
	out := Build{Platform: p, Engine: filepath.Join(dir, EngineFile), Shim: filepath.Join(dir, ShimFile)}
	if !isFile(out.Engine) || !isFile(out.Shim) {
		var have []string
		for _, q := range b.Platforms() {
			have = append(have, q.String())
		}
		list := "none"
		if len(have) > 0 {
			list = strings.Join(have, ", ")
		}
		return out, fmt.Errorf("%w: the host is %s, and this Shepherd has engines for %s", ErrNoBuild, p, list)
	}
	h := sha256.New()
	for _, f := range []string{out.Engine, out.Shim} {
		fh, err := os.Open(f)
		if err != nil {
			return out, err
		}
		_, err = io.Copy(h, fh)
		fh.Close()
		if err != nil {
			return out, fmt.Errorf("read %s: %w", f, err)
		}
	}
	out.ID = safeVersion(b.Version) + "-" + hex.EncodeToString(h.Sum(nil))[:12]
	return out, nil
}

// safeVersion keeps a version usable as a folder name.
func safeVersion(v string) string {
	var b strings.Builder
	for _, r := range v {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '+' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 || v == "." || v == ".." {
		return "unversioned"
	}
	return b.String()
}
