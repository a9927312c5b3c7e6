// Package hoststest lets programs outside backend/hosts — the benchmarks —
// run the tests' in-process SSH server (internal/sshtest): a host on this
// machine without an sshd, as the hosts' own tests use it.
package hoststest

import (
	"fmt"
	"testing"

	"golang.org/x/crypto/ssh"

	"shepherd/backend/hosts/internal/sshtest"
)

// Server is an in-process SSH server (see sshtest.Server).
type Server = sshtest.Server

// New starts a server on a free loopback port that lets in keys; Stop it
// when done. A failure to start panics.
func New(keys ...ssh.PublicKey) *Server { return sshtest.New(program{}, keys...) }

// program stands for a test where there is none: failures panic, and
// clean-ups are the caller's (Server.Stop).
type program struct{ testing.TB }

func (program) Helper()                        {}
func (program) Cleanup(func())                 {}
func (program) Logf(string, ...any)            {}
func (program) Log(...any)                     {}
func (program) Fatal(args ...any)              { panic(fmt.Sprint(args...)) }
func (program) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
func (program) Errorf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
func (program) Error(args ...any)              { panic(fmt.Sprint(args...)) }
