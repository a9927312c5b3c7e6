//go:build !linux

package seccomp

import (
	"errors"
	"runtime"
)

// Filter: seccomp is Linux's.
type Filter struct{}

// New fails off Linux.
func New() (*Filter, error) { return nil, errors.New("no seccomp on " + runtime.GOOS) }

// Load fails off Linux.
func (f *Filter) Load() error { return errors.New("no seccomp on " + runtime.GOOS) }
