package main

import (
	"shepherd/backend/sandbox"
	"shepherd/backend/sandbox/restrict"
	"shepherd/backend/shim"
)

// Only the shim's command links Landlock's library (package restrict): the
// engine imports package shim for its protocol and has no use for it.
func init() {
	shim.Restrict = func(g sandbox.Grants) error { return restrict.Restrict(g) }
}
