package shim

import (
	"os"
	"os/exec"
)

// Package is the shim command's import path.
const Package = "shepherd/backend/shim/cmd/shepherd-shim"

// BuildCommand is `go build` of the shim into out (for tests and benches;
// scripts/lib.sh does the same). Always without cgo: the shim is then a
// static binary of about 3 MiB resident, where the sandbox's dependency
// (go-landlock's psx) would otherwise link libc and add 2 MiB per agent.
func BuildCommand(out string, flags ...string) *exec.Cmd {
	args := append([]string{"build"}, flags...)
	cmd := exec.Command("go", append(args, "-o", out, Package)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd
}
