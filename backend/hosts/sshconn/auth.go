package sshconn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"shepherd/backend/hosts/sshconfig"
)

// defaultKeys are tried when the config names no IdentityFile.
var defaultKeys = []string{"id_ed25519", "id_ecdsa", "id_rsa"}

// keyring is the keys one connection attempt offers, and what was left
// out and why.
type keyring struct {
	signers []ssh.Signer
	notes   []string // "skipped ~/.ssh/id_rsa: …"
	closer  io.Closer
}

func (k *keyring) Close() {
	if k.closer != nil {
		_ = k.closer.Close()
	}
}

// keys gathers the keys for t: its IdentityFiles (else the default keys
// of ~/.ssh) and the SSH agent's (IdentityAgent, else agentSock), the
// files' first when the config names them. Encrypted files are skipped
// with a note (their key counts if the agent holds it), and so are files
// others can read (OpenSSH refuses those too).
func keys(t sshconfig.Target, home, agentSock string) *keyring {
	k := &keyring{}
	explicit := len(t.IdentityFiles) > 0
	files := t.IdentityFiles
	if !explicit {
		for _, n := range defaultKeys {
			files = append(files, filepath.Join(home, ".ssh", n))
		}
	}
	var fileSigners []ssh.Signer
	var filePubs [][]byte // public keys the files name, even encrypted ones
	for _, f := range files {
		s, pub, note := readKey(f, explicit)
		if note != "" {
			k.notes = append(k.notes, note)
		}
		if pub != nil {
			filePubs = append(filePubs, pub.Marshal())
		}
		if s != nil {
			fileSigners = append(fileSigners, s)
		}
	}
	var agentSigners []ssh.Signer
	if t.IdentityAgent != "" {
		agentSock = t.IdentityAgent
	}
	if agentSock != "" && agentSock != "none" {
		c, err := net.Dial("unix", agentSock)
		if err != nil {
			k.notes = append(k.notes, fmt.Sprintf("the SSH agent at %s does not answer: %v", agentSock, err))
		} else {
			k.closer = c
			ss, err := agent.NewClient(c).Signers()
			if err != nil {
				k.notes = append(k.notes, fmt.Sprintf("the SSH agent at %s: %v", agentSock, err))
			}
			agentSigners = ss
		}
	}
	named := func(s ssh.Signer) bool {
		for _, p := range filePubs {
			if bytes.Equal(p, s.PublicKey().Marshal()) {
				return true
			}
		}
		return false
	}
	seen := map[string]bool{}
	add := func(s ssh.Signer) {
		if w := string(s.PublicKey().Marshal()); !seen[w] {
			seen[w] = true
			k.signers = append(k.signers, s)
		}
	}
	if explicit {
		// The keys the config names first: the server may take only a
		// few tries (sshd's MaxAuthTries).
		for _, s := range fileSigners {
			add(s)
		}
		for _, s := range agentSigners {
			if named(s) {
				add(s)
			}
		}
	}
	if !t.IdentitiesOnly {
		for _, s := range agentSigners {
			add(s)
		}
	} else if !explicit {
		for _, s := range agentSigners {
			if named(s) {
				add(s)
			}
		}
	}
	for _, s := range fileSigners {
		add(s)
	}
	return k
}

// readKey reads a private key file: its signer, or its public key (from
// the file or file.pub) and why it cannot be used. A missing default key
// is no news; a missing key the config names is.
func readKey(file string, named bool) (ssh.Signer, ssh.PublicKey, string) {
	fi, err := os.Stat(file)
	if errors.Is(err, os.ErrNotExist) {
		if named {
			// The agent may still hold it (IdentityFile pointing at a
			// .pub, or a key that lives only in the agent).
			return nil, readPub(file), ""
		}
		return nil, nil, ""
	}
	if err != nil {
		return nil, nil, fmt.Sprintf("skipped %s: %v", file, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, readPub(file), fmt.Sprintf("skipped %s: others can read it (mode %#o); OpenSSH refuses such keys too: chmod 600 %s", file, fi.Mode().Perm(), file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, fmt.Sprintf("skipped %s: %v", file, err)
	}
	s, err := ssh.ParsePrivateKey(b)
	var missing *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &missing):
		pub := missing.PublicKey
		if pub == nil {
			pub = readPub(file)
		}
		return nil, pub, fmt.Sprintf("skipped %s: it is encrypted (Shepherd asks for no passphrase); add it to your SSH agent: ssh-add %s", file, file)
	case err != nil:
		return nil, readPub(file), fmt.Sprintf("skipped %s: not a private key Shepherd can read: %v", file, err)
	}
	return s, s.PublicKey(), ""
}

func readPub(file string) ssh.PublicKey {
	b, err := os.ReadFile(file + ".pub")
	if err != nil {
		return nil
	}
	k, _, _, _, err := ssh.ParseAuthorizedKey(b)
	if err != nil {
		return nil
	}
	return k
}
