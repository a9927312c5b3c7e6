// Package hoststest lets programs outside backend/hosts — the benchmarks —
// run the tests' in-process SSH server (internal/sshtest): a host on this
// machine without an sshd, as the hosts' own tests use it.
package hoststest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
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

// ClientKey makes a new ed25519 key, writes it as home/.ssh/id_ed25519
// (where the local engine's SSH looks), and returns its public half for
// New to let in.
func ClientKey(home string) (ssh.PublicKey, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(home, ".ssh")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "id_ed25519"), pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, err
	}
	return ssh.NewPublicKey(priv.Public())
}
