package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ScanLimits bound the search for repositories nested in a box's grants:
// how deep below a grant's root, and how many folders are read in all.
type ScanLimits struct {
	Depth int
	Dirs  int
}

// DefaultScan is what a start affords: a few milliseconds at most (see the
// README's figures), shallow folders first.
var DefaultScan = ScanLimits{Depth: 6, Dirs: 3000}

// scanSkip are folders never searched: dependencies, build output, caches
// and virtual environments — large, and written by tools rather than
// holding the user's repositories.
var scanSkip = []string{"node_modules", "bower_components", "vendor", "target", "dist", "build", "out",
	".venv", "venv", "__pycache__", ".cache", ".next", ".nuxt", ".gradle", ".m2", ".npm", ".pnpm-store",
	".yarn", ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache", "coverage", "Pods", "DerivedData",
	".terraform", ".direnv", ".cargo", ".rustup", ".git"}

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
	type dir struct {
		path  string
		depth int
	}
	var queue []dir
	for _, g := range grants {
		queue = append(queue, dir{g, 0})
	}
	for len(queue) > 0 {
		if s.Dirs >= lim.Dirs {
			s.Cut = true
			break
		}
		d := queue[0]
		queue = queue[1:]
		ents, err := os.ReadDir(d.path)
		s.Dirs++
		if err != nil {
			continue
		}
		if d.depth > 0 && slices.ContainsFunc(ents, func(e os.DirEntry) bool { return e.Name() == ".git" }) {
			s.Paths = append(s.Paths, filepath.Join(d.path, ".git"))
			for _, e := range ents {
				if slices.ContainsFunc(projectConfig, func(c configName) bool { return c.name == e.Name() }) {
					s.Paths = append(s.Paths, filepath.Join(d.path, e.Name()))
				}
			}
		}
		for _, e := range ents {
			if !e.IsDir() || slices.Contains(scanSkip, e.Name()) || strings.HasPrefix(e.Name(), "bazel-") {
				continue
			}
			if d.depth+1 > lim.Depth {
				s.Cut = true
				continue
			}
			queue = append(queue, dir{filepath.Join(d.path, e.Name()), d.depth + 1})
		}
	}
	slices.Sort(s.Paths)
	s.Paths = slices.Compact(s.Paths)
	return s
}
