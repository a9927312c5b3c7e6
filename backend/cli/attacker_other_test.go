//go:build !linux

package cli

import "errors"

// ptraceAny: the attack is Linux's (macOS has no /proc).
func ptraceAny(string) error { return errors.New("not on this system") }
