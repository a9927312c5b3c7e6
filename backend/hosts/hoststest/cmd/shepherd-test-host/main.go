// Command shepherd-test-host is a host for the browser end-to-end tests: an
// in-process SSH server on a loopback port (the hosts' tests' own) that runs
// what it is asked as this user, in a home folder of its own. It writes a
// client key into the local engine's ~/.ssh (-client-home), lets that key
// in, writes where it listens and its host key's fingerprint as JSON
// with the host's home folder (-info), and runs until SIGTERM or SIGINT.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"golang.org/x/crypto/ssh"

	"shepherd/backend/hosts/hoststest"
)

func main() {
	clientHome := flag.String("client-home", "", "the local engine's home: its ~/.ssh/id_ed25519 is written")
	hostHome := flag.String("host-home", "", "the host's home folder (HOME and XDG_RUNTIME_DIR of what it runs)")
	info := flag.String("info", "", "where to write {url, fingerprint}")
	flag.Parse()
	if *clientHome == "" || *hostHome == "" || *info == "" {
		fmt.Fprintln(os.Stderr, "usage: shepherd-test-host -client-home DIR -host-home DIR -info FILE")
		os.Exit(2)
	}
	if err := run(*clientHome, *hostHome, *info); err != nil {
		fmt.Fprintln(os.Stderr, "shepherd-test-host:", err)
		os.Exit(1)
	}
}

func run(clientHome, hostHome, info string) error {
	pub, err := hoststest.ClientKey(clientHome)
	if err != nil {
		return err
	}
	runDir := filepath.Join(hostHome, "run")
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		return err
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	srv := hoststest.New(pub)
	defer srv.Stop()
	srv.Dir = hostHome
	srv.Env = []string{"HOME=" + hostHome, "XDG_RUNTIME_DIR=" + runDir, "PATH=" + os.Getenv("PATH")}
	b, err := json.Marshal(map[string]string{"url": "ssh://me@" + srv.Addr, "fingerprint": ssh.FingerprintSHA256(srv.HostKey.PublicKey()),
		"home": hostHome})
	if err != nil {
		return err
	}
	if err := os.WriteFile(info+".tmp", b, 0o600); err != nil {
		return err
	}
	if err := os.Rename(info+".tmp", info); err != nil {
		return err
	}
	<-sigs
	return nil
}
