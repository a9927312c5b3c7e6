//go:build !linux

package proc

import (
	"errors"
	"os"

	"shepherd/backend/shim"
)

// spawner: off Linux a sandboxed shim starts like any other.
type spawner struct{}

func (r *Runner) spawnBoxed(shim.SpawnRequest, []*os.File) (*os.Process, error) {
	return nil, errors.ErrUnsupported
}

// Close: nothing to end off Linux.
func (r *Runner) Close() {}
