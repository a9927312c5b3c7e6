package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
)

// scanDir is a folder FindRepos has yet to read: its path and depth, and
// (Linux) a descriptor opened from its parent's, so that no path is walked
// twice.

// ScanLimits bound the search for repositories nested in a box's grants:
// how deep below a grant's root, and how many folders are read in all.
type ScanLimits struct {
	Depth int
	Dirs  int
}

// DefaultScan is what a start affords: a few µs a folder, made while the
// box is built, so about 2 ms at most (see the README's figures), shallow
// folders first.
var DefaultScan = ScanLimits{Depth: 6, Dirs: 500}

// scanSkip are folders never searched: dependencies, build output, caches
// and virtual environments — large, and written by tools rather than
// holding the user's repositories —, and the agent CLIs' folders (a grant
// that is one is not searched either).
var scanSkip = []string{"node_modules", "bower_components", "vendor", "target", "dist", "build", "out",
	".venv", "venv", "__pycache__", ".cache", ".next", ".nuxt", ".gradle", ".m2", ".npm", ".pnpm-store",
	".yarn", ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache", "coverage", "Pods", "DerivedData",
	".terraform", ".direnv", ".cargo", ".rustup", ".git", ".claude", ".codex"}

// Scanned is what FindRepos found and how far it looked.
type Scanned struct {
	// Paths to keep read-only: each nested repository's .git, and the
	// agent CLIs' project configuration beside it.
	Paths []string
	Dirs  int  // folders read
	Cut   bool // the limits were reached before every folder was read
}

// FindRepos searches the grants, breadth first within lim, for nested
// repositories (a .git folder or file below a grant's root; the roots'
// own are Protect's). Symlinks are not followed; the folders in scanSkip
// are not entered, nor is any git dir.
func FindRepos(grants []string, lim ScanLimits) Scanned {
	var s Scanned
	var queue []scanDir
	for _, g := range grants {
		if slices.Contains(scanSkip, filepath.Base(g)) {
			continue
		}
		if d, err := openScanDir(g, 0, -1, ""); err == nil {
			queue = append(queue, d)
		}
	}
	buf := make([]byte, 16<<10)
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		if s.Dirs >= lim.Dirs {
			s.Cut = true
			d.close()
			continue
		}
		s.Dirs++
		var sub, config []string
		repo := false
		_ = d.read(buf, func(name string, dir bool) {
			switch {
			case name == ".git":
				repo = true
			case slices.ContainsFunc(projectConfig, func(c configName) bool { return c.name == name }):
				config = append(config, name)
			}
			if dir && !slices.Contains(scanSkip, name) && !strings.HasPrefix(name, "bazel-") {
				sub = append(sub, name)
			}
		})
		if repo && d.depth > 0 {
			s.Paths = append(s.Paths, filepath.Join(d.path, ".git"))
			for _, c := range config {
				s.Paths = append(s.Paths, filepath.Join(d.path, c))
			}
		}
		for _, name := range sub {
			// Folders that would never be read are not opened.
			if d.depth+1 > lim.Depth || s.Dirs+len(queue) >= lim.Dirs {
				s.Cut = true
				break
			}
			if c, err := openScanDir(name, d.depth+1, d.fd, d.path); err == nil {
				queue = append(queue, c)
			}
		}
		d.close()
	}
	slices.Sort(s.Paths)
	s.Paths = slices.Compact(s.Paths)
	return s
}
