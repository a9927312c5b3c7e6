package main

import (
	"shepherd/backend/sandbox"
	"shepherd/backend/sandbox/restrict"
	"shepherd/backend/sandbox/seccomp"
	"shepherd/backend/shim"
)

// Only the shim's command links Landlock's library (package restrict) and
// the seccomp filter: the engine imports package shim for its protocol and
// has no use for them.
func init() {
	shim.Restrict = func(g sandbox.Grants) error { return restrict.Restrict(g) }
	shim.Seccomp = func() error {
		f, err := seccomp.New()
		if err != nil {
			return err
		}
		return f.Load()
	}
}
