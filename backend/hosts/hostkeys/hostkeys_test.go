package hostkeys

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/ssh"
)

func edKey(t testing.TB) ssh.PublicKey {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func ecKey(t testing.TB) ssh.PublicKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ssh.NewPublicKey(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// An unknown key is refused with its type and fingerprint; accepted, it is
// written in OpenSSH's format (the file 0600, its folder 0700) and known
// from then on; a changed key is refused naming the line of the old one.
func TestUnknownAcceptChanged(t *testing.T) {
	for _, hash := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), ".ssh")
		db := &DB{User: []string{filepath.Join(dir, "known_hosts")}, Hash: hash}
		key := edKey(t)
		host := "box.example:2222"
		err := db.Check(host, nil, key)
		var unknown *UnknownKeyError
		if !errors.As(err, &unknown) || !errors.Is(err, ErrUnknownKey) {
			t.Fatalf("unknown key: %v", err)
		}
		if unknown.Fingerprint != ssh.FingerprintSHA256(key) || unknown.Type != "ssh-ed25519" ||
			!strings.Contains(err.Error(), unknown.Fingerprint) || !strings.Contains(err.Error(), "[box.example]:2222") {
			t.Fatalf("unknown key error: %+v %q", unknown, err)
		}
		if err := db.Accept(host, unknown.Key); err != nil {
			t.Fatal(err)
		}
		if err := db.Accept(host, unknown.Key); err != nil { // twice: written once
			t.Fatal(err)
		}
		b, _ := os.ReadFile(db.User[0])
		if n := strings.Count(string(b), "\n"); n != 1 {
			t.Fatalf("known_hosts has %d lines: %q", n, b)
		}
		if hash != strings.HasPrefix(string(b), "|1|") || (!hash && !strings.HasPrefix(string(b), "[box.example]:2222 ssh-ed25519 ")) {
			t.Fatalf("hash=%v: line %q", hash, b)
		}
		for path, want := range map[string]os.FileMode{db.User[0]: 0o600, dir: 0o700} {
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
				t.Errorf("%s: %v %v, want %v", path, fi.Mode(), err, want)
			}
		}
		if err := db.Check(host, nil, key); err != nil {
			t.Fatalf("accepted key: %v", err)
		}
		// Another port of the same name is another host.
		if err := db.Check("box.example:22", nil, key); !errors.Is(err, ErrUnknownKey) {
			t.Fatalf("port 22: %v", err)
		}
		// OpenSSH reads the line Shepherd wrote.
		if _, err := exec.LookPath("ssh-keygen"); err == nil {
			out, err := exec.Command("ssh-keygen", "-F", "[box.example]:2222", "-f", db.User[0]).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "found: line 1") {
				t.Errorf("ssh-keygen -F: %v\n%s", err, out)
			}
		}

		other := edKey(t)
		err = db.Check(host, nil, other)
		var changed *ChangedKeyError
		if !errors.As(err, &changed) || !errors.Is(err, ErrChangedKey) {
			t.Fatalf("changed key: %v", err)
		}
		want := []KnownLine{{File: db.User[0], Line: 1, Type: "ssh-ed25519", Fingerprint: ssh.FingerprintSHA256(key)}}
		if diff := cmp.Diff(want, changed.Known); diff != "" || changed.Fingerprint != ssh.FingerprintSHA256(other) {
			t.Fatalf("changed key (-want +got):\n%s", diff)
		}
		if msg := err.Error(); !strings.Contains(msg, db.User[0]+":1") || !strings.Contains(msg, "refused") || !strings.Contains(msg, "ssh-keygen -R") {
			t.Fatalf("changed key message: %s", msg)
		}
		if err := db.Accept(host, other); !errors.Is(err, ErrChangedKey) {
			t.Fatalf("accepting over a known key: %v", err)
		}
	}
}

// A host known by one key type is asked for that type only (otherwise a
// host offering another type first would look changed).
func TestAlgorithms(t *testing.T) {
	dir := t.TempDir()
	db := &DB{User: []string{filepath.Join(dir, "known_hosts")}, Global: []string{filepath.Join(dir, "missing")}}
	if algos, err := db.Algorithms("box:22"); err != nil || len(algos) != 0 {
		t.Fatalf("unknown host: %v %v", algos, err)
	}
	if err := db.Accept("box:22", ecKey(t)); err != nil {
		t.Fatal(err)
	}
	algos, err := db.Algorithms("box:22")
	if err != nil || len(algos) != 1 || algos[0] != "ecdsa-sha2-nistp256" {
		t.Fatalf("algorithms: %v %v", algos, err)
	}
}

// The global file is read; a revoked key is refused; a user file without a
// final newline gets the accepted line on a line of its own.
func TestGlobalRevokedAndNewline(t *testing.T) {
	dir := t.TempDir()
	global := filepath.Join(dir, "ssh_known_hosts")
	user := filepath.Join(dir, "known_hosts")
	gk, rk := edKey(t), edKey(t)
	if err := os.WriteFile(global, []byte(Line("gbox:22", gk, false)+"\n@revoked * "+strings.TrimPrefix(Line("x:22", rk, false), "x ")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte("# mine, no final newline"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := &DB{User: []string{user}, Global: []string{global}}
	if err := db.Check("gbox:22", &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 22}, gk); err != nil {
		t.Fatalf("global key: %v", err)
	}
	if err := db.Check("any:22", nil, rk); !errors.Is(err, ErrRevokedKey) || !strings.Contains(err.Error(), global+":2") {
		t.Fatalf("revoked key: %v", err)
	}
	k := edKey(t)
	if err := db.Accept("new:22", k); err != nil {
		t.Fatal(err)
	}
	if err := db.Check("new:22", nil, k); err != nil {
		t.Fatalf("after accept: %v", err)
	}
	b, _ := os.ReadFile(user)
	if !strings.HasPrefix(string(b), "# mine, no final newline\nnew ssh-ed25519 ") {
		t.Fatalf("user file: %q", b)
	}
	if err := (&DB{}).Accept("x:22", k); err == nil {
		t.Fatal("accepted with no file to write to")
	}
	// A file that cannot be parsed is an error naming it, not "unknown".
	if err := os.WriteFile(user, []byte("host ssh-ed25519 not-base64!\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := db.Check("new:22", nil, k); err == nil || errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), user) {
		t.Fatalf("broken known_hosts: %v", err)
	}
}
