// Package hostkeys checks an SSH host's key against the user's known_hosts
// files (OpenSSH's format, read by golang.org/x/crypto/ssh/knownhosts
// through github.com/skeema/knownhosts, which also says which key types a
// known host has, so that the connection asks for those). Nothing is ever
// trusted on first use in silence: an unknown key is an *UnknownKeyError
// carrying its type and SHA256 fingerprint for the user to compare and
// accept (Accept then appends it to known_hosts); a changed key is a
// *ChangedKeyError naming the known_hosts line that holds the old one, and
// is refused.
package hostkeys

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"
	xknownhosts "golang.org/x/crypto/ssh/knownhosts"
)

var (
	// ErrUnknownKey: the host's key is in no known_hosts file.
	ErrUnknownKey = errors.New("unknown host key")
	// ErrChangedKey: known_hosts holds another key for the host.
	ErrChangedKey = errors.New("host key changed")
	// ErrRevokedKey: known_hosts marks the host's key @revoked.
	ErrRevokedKey = errors.New("host key revoked")
)

// Fingerprint is a key's SHA256 fingerprint as OpenSSH prints it
// ("SHA256:…").
func Fingerprint(k ssh.PublicKey) string { return ssh.FingerprintSHA256(k) }

// UnknownKeyError is an unknown host key, with what the user needs to
// decide: compare the fingerprint with the one the host's owner reads
// (`ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub` on the host).
type UnknownKeyError struct {
	Host        string // host:port as it was checked
	Type        string // "ssh-ed25519", …
	Fingerprint string // "SHA256:…"
	Key         ssh.PublicKey
}

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("the host key of %s is not known: %s %s. Compare this fingerprint with the host's own "+
		"(ssh-keygen -lf on its host key) and accept it to connect", knownhosts.Normalize(e.Host), e.Type, e.Fingerprint)
}

func (e *UnknownKeyError) Is(target error) bool { return target == ErrUnknownKey }

// KnownLine is a known_hosts line that holds a key for a host.
type KnownLine struct {
	File        string
	Line        int
	Type        string
	Fingerprint string
}

func (l KnownLine) String() string {
	return fmt.Sprintf("%s:%d (%s %s)", l.File, l.Line, l.Type, l.Fingerprint)
}

// ChangedKeyError is a host that offered a key other than the one
// known_hosts holds for it: refused (someone may be in the middle).
type ChangedKeyError struct {
	Host        string
	Type        string
	Fingerprint string // of the key offered now
	Known       []KnownLine
}

func (e *ChangedKeyError) Error() string {
	var known []string
	for _, k := range e.Known {
		known = append(known, k.String())
	}
	file := "~/.ssh/known_hosts"
	if len(e.Known) > 0 {
		file = e.Known[0].File
	}
	return fmt.Sprintf("refused: the host key of %s has changed — it now offers %s %s, but %s holds another key for it. "+
		"Someone may be intercepting the connection, or the host was reinstalled; if its owner confirms the new key, "+
		"remove the old line (ssh-keygen -R '%s' -f '%s') and connect again",
		knownhosts.Normalize(e.Host), e.Type, e.Fingerprint, strings.Join(known, ", "), knownhosts.Normalize(e.Host), file)
}

func (e *ChangedKeyError) Is(target error) bool { return target == ErrChangedKey }

// RevokedKeyError is a key marked @revoked in known_hosts.
type RevokedKeyError struct {
	Host        string
	Fingerprint string
	Line        KnownLine
}

func (e *RevokedKeyError) Error() string {
	return fmt.Sprintf("refused: the host key of %s (%s) is marked revoked at %s", knownhosts.Normalize(e.Host), e.Fingerprint, e.Line)
}

func (e *RevokedKeyError) Is(target error) bool { return target == ErrRevokedKey }

// DB is the known_hosts files of one user: User's (read, and the first
// takes accepted keys) and Global's (read only). The files are read again
// at every check, so an edit or an acceptance counts at once.
type DB struct {
	User   []string
	Global []string
	// Hash writes accepted hosts' names hashed (HashKnownHosts).
	Hash bool

	mu sync.Mutex // serialises appends
}

// load reads the files that exist.
func (db *DB) load() (*knownhosts.HostKeyDB, error) {
	var files []string
	for _, f := range append(append([]string(nil), db.User...), db.Global...) {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			files = append(files, f)
		}
	}
	kh, err := knownhosts.NewDB(files...)
	if err != nil {
		return nil, fmt.Errorf("read known_hosts: %w", err)
	}
	return kh, nil
}

// Algorithms are the host key algorithms to ask hostport for: those of the
// keys known for it (so a host known by its ed25519 key is not asked for
// its RSA key, which would look like a change), or nil (any) for a host not
// known yet.
func (db *DB) Algorithms(hostport string) ([]string, error) {
	kh, err := db.load()
	if err != nil {
		return nil, err
	}
	return kh.HostKeyAlgorithms(hostport), nil
}

// Callback is the ssh.HostKeyCallback that checks keys against the files.
func (db *DB) Callback() ssh.HostKeyCallback {
	return func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		return db.Check(hostname, remote, key)
	}
}

// Check checks key for hostname (host:port); nil if it is known for it.
func (db *DB) Check(hostname string, remote net.Addr, key ssh.PublicKey) error {
	kh, err := db.load()
	if err != nil {
		return err
	}
	if remote == nil {
		remote = &net.TCPAddr{IP: net.IPv4zero}
	}
	err = kh.HostKeyCallback()(hostname, remote, key)
	if err == nil {
		return nil
	}
	var revoked *xknownhosts.RevokedError
	if errors.As(err, &revoked) {
		return &RevokedKeyError{Host: hostname, Fingerprint: Fingerprint(key), Line: known(revoked.Revoked)}
	}
	var ke *xknownhosts.KeyError
	if !errors.As(err, &ke) {
		return fmt.Errorf("check the host key of %s: %w", hostname, err)
	}
	if len(ke.Want) == 0 {
		return &UnknownKeyError{Host: hostname, Type: key.Type(), Fingerprint: Fingerprint(key), Key: key}
	}
	ce := &ChangedKeyError{Host: hostname, Type: key.Type(), Fingerprint: Fingerprint(key)}
	for _, w := range ke.Want {
		ce.Known = append(ce.Known, known(w))
	}
	return ce
}

func known(k xknownhosts.KnownKey) KnownLine {
	l := KnownLine{File: k.Filename, Line: k.Line}
	if k.Key != nil {
		l.Type, l.Fingerprint = k.Key.Type(), Fingerprint(k.Key)
	}
	return l
}

// Line is the known_hosts line for key under hostname (host:port), in
// OpenSSH's format: "[host]:port" for a port other than 22, the name
// hashed when hash is set.
func Line(hostname string, key ssh.PublicKey, hash bool) string {
	name := knownhosts.Normalize(hostname)
	if hash {
		name = xknownhosts.HashHostname(name)
	}
	return xknownhosts.Line([]string{name}, key)
}

// Accept appends key for hostname to the first of the user's known_hosts
// files (created 0600, its folder 0700), after the user compared its
// fingerprint. A key already known for it is not written twice; a host
// whose known key differs is refused (its old line must go first).
func (db *DB) Accept(hostname string, key ssh.PublicKey) error {
	if len(db.User) == 0 {
		return errors.New("no known_hosts file to write to (UserKnownHostsFile none)")
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	switch err := db.Check(hostname, nil, key); {
	case err == nil:
		return nil
	case errors.Is(err, ErrUnknownKey):
	default:
		return err
	}
	file := db.User[0]
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(file), err)
	}
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open %s: %w", file, err)
	}
	defer f.Close()
	line := Line(hostname, key, db.Hash) + "\n"
	// A file whose last line has no newline would glue the two.
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, fi.Size()-1); err == nil && !bytes.Equal(last, []byte("\n")) {
			line = "\n" + line
		}
	}
	if _, err := io.WriteString(f, line); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	return f.Close()
}
