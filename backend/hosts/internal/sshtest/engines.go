package sshtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	buildMu sync.Mutex
	builds  = map[string]string{}
)

// Engines builds shepherd-engine (reporting version) and shepherd-shim
// for this machine, static as for hosts, into DIR/<os>-<arch>/ and returns
// DIR; once per version per test binary.
func Engines(t testing.TB, version string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if dir, ok := builds[version]; ok {
		return dir
	}
	dir, err := os.MkdirTemp("", "shepherd-host-engines-")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, runtime.GOOS+"-"+runtime.GOARCH)
	for _, b := range []struct{ pkg, name string }{
		{"shepherd/backend/cli/cmd/shepherd-engine", "shepherd-engine"},
		{"shepherd/backend/shim/cmd/shepherd-shim", "shepherd-shim"},
	} {
		cmd := exec.Command("go", "build", "-ldflags", "-X shepherd/backend/cli.Version="+version, "-o", filepath.Join(out, b.name), b.pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if o, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", b.name, err, o)
		}
	}
	builds[version] = dir
	return dir
}

// RemoveEngines removes what Engines built (from TestMain, after the
// tests).
func RemoveEngines() {
	buildMu.Lock()
	defer buildMu.Unlock()
	for v, dir := range builds {
		_ = os.RemoveAll(dir)
		delete(builds, v)
	}
}
