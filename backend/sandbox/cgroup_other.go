//go:build !linux

package sandbox

import (
	"errors"
	"os"
)

// DetectCgroup: cgroups are Linux's.
func DetectCgroup() (base, why string) { return "", "no cgroups on this system" }

// NewBoxCgroup: cgroups are Linux's.
func NewBoxCgroup(base, name string, l Limits) (string, error) {
	return "", errors.New("no cgroups on this system")
}

// OpenCgroup: cgroups are Linux's.
func OpenCgroup(dir string) (*os.File, error) { return nil, errors.New("no cgroups on this system") }

// SweepCgroups: cgroups are Linux's.
func SweepCgroups(base string) {}
