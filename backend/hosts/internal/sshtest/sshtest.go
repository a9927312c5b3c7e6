// Package sshtest is an SSH server in the test's own process
// (golang.org/x/crypto/ssh): public-key authentication only, `exec`
// requests run as real local commands, the SFTP subsystem (pkg/sftp),
// forwarding to Unix sockets (direct-streamlocal@openssh.com) and to TCP
// (direct-tcpip, for ProxyJump), and keepalive@openssh.com answered as
// OpenSSH answers it. It can stop and come back on the same address,
// drop its connections, and stop answering (a silent network), and it
// counts connections and channels, so tests can prove one connection
// carries many channels.
package sshtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// Server is a running test SSH server.
type Server struct {
	Addr    string     // 127.0.0.1:port, the same across Stop and Start
	HostKey ssh.Signer // its host key
	User    string     // the only user it lets in ("": any)
	// Env and Dir are the environment and working folder of the commands
	// it runs (HOME, PATH, XDG_RUNTIME_DIR…).
	Env []string
	Dir string

	t  testing.TB
	mu sync.Mutex
	// authorized keys, by their wire form
	authorized map[string]bool
	ln         net.Listener
	conns      map[*ssh.ServerConn]net.Conn
	// raws are the accepted connections still open, a handshake under way
	// among them: Stop closes them all (a client can be done with its
	// handshake before the server's side has registered the connection).
	raws   map[net.Conn]bool
	execs  []string
	frozen bool

	connections atomic.Int64 // authenticated connections, ever
	unixChans   atomic.Int64 // direct-streamlocal channels, ever
	sessions    atomic.Int64 // session channels, ever
	keepalives  atomic.Int64 // keepalive requests received
	wg          sync.WaitGroup
}

// NewSigner makes an ed25519 key.
func NewSigner(t testing.TB) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// New starts a server with a new host key on a free loopback port; it
// lets in the given keys. It stops when the test ends.
func New(t testing.TB, authorized ...ssh.PublicKey) *Server {
	t.Helper()
	s := &Server{HostKey: NewSigner(t), t: t, authorized: map[string]bool{}, conns: map[*ssh.ServerConn]net.Conn{},
		raws: map[net.Conn]bool{}}
	for _, k := range authorized {
		s.Authorize(k)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = ln.Addr().String()
	s.serve(ln)
	t.Cleanup(s.Stop)
	return s
}

// Port is the server's port.
func (s *Server) Port() int {
	_, p, _ := net.SplitHostPort(s.Addr)
	n, _ := strconv.Atoi(p)
	return n
}

// Authorize lets key in.
func (s *Server) Authorize(k ssh.PublicKey) {
	s.mu.Lock()
	s.authorized[string(k.Marshal())] = true
	s.mu.Unlock()
}

// SetHostKey changes the server's host key (for connections from now on).
func (s *Server) SetHostKey(k ssh.Signer) {
	s.mu.Lock()
	s.HostKey = k
	s.mu.Unlock()
}

// Connections counts the authenticated connections ever made.
func (s *Server) Connections() int { return int(s.connections.Load()) }

// Live counts the connections open now.
func (s *Server) Live() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// UnixChannels counts the Unix-socket forwards ever opened.
func (s *Server) UnixChannels() int { return int(s.unixChans.Load()) }

// Sessions counts the session channels ever opened (exec, sftp).
func (s *Server) Sessions() int { return int(s.sessions.Load()) }

// Keepalives counts the keepalive requests received.
func (s *Server) Keepalives() int { return int(s.keepalives.Load()) }

// Execs are the commands run, in order.
func (s *Server) Execs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.execs...)
}

// Freeze makes the server stop answering anything on its open
// connections (as a cut network would), or answer again.
func (s *Server) Freeze(on bool) {
	s.mu.Lock()
	s.frozen = on
	s.mu.Unlock()
}

func (s *Server) isFrozen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frozen
}

// Stop closes the listener and every connection.
func (s *Server) Stop() {
	s.mu.Lock()
	if s.ln != nil {
		s.ln.Close()
		s.ln = nil
	}
	for c, raw := range s.conns {
		raw.Close()
		c.Close()
	}
	for raw := range s.raws {
		raw.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Start listens again on the same address after Stop.
func (s *Server) Start() {
	s.t.Helper()
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		s.t.Fatalf("listen again on %s: %v", s.Addr, err)
	}
	s.serve(ln)
}

func (s *Server) serve(ln net.Listener) {
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			raw, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			if s.ln != ln { // stopped since it was accepted
				s.mu.Unlock()
				raw.Close()
				continue
			}
			s.raws[raw] = true
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer func() {
					s.mu.Lock()
					delete(s.raws, raw)
					s.mu.Unlock()
				}()
				s.handle(raw)
			}()
		}
	}()
}

func (s *Server) config() *ssh.ServerConfig {
	s.mu.Lock()
	key := s.HostKey
	s.mu.Unlock()
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(c ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
			s.mu.Lock()
			ok := s.authorized[string(k.Marshal())]
			s.mu.Unlock()
			if !ok || (s.User != "" && c.User() != s.User) {
				return nil, fmt.Errorf("key not authorized for %s", c.User())
			}
			return nil, nil
		},
	}
	cfg.AddHostKey(key)
	return cfg
}

func (s *Server) handle(raw net.Conn) {
	defer raw.Close()
	conn, chans, reqs, err := ssh.NewServerConn(raw, s.config())
	if err != nil {
		return
	}
	s.connections.Add(1)
	s.mu.Lock()
	s.conns[conn] = raw
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
	}()
	go func() {
		for r := range reqs {
			if r.Type == "keepalive@openssh.com" {
				s.keepalives.Add(1)
			}
			if s.isFrozen() {
				continue // never answered: the client's keepalive times out
			}
			if r.WantReply {
				_ = r.Reply(false, nil) // OpenSSH's answer to keepalive@openssh.com
			}
		}
	}()
	var wg sync.WaitGroup
	for nc := range chans {
		if s.isFrozen() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch nc.ChannelType() {
			case "session":
				s.sessions.Add(1)
				s.session(nc)
			case "direct-streamlocal@openssh.com":
				var m struct {
					Path      string
					Reserved0 string
					Reserved1 uint32
				}
				if err := ssh.Unmarshal(nc.ExtraData(), &m); err != nil {
					_ = nc.Reject(ssh.Prohibited, "bad request")
					return
				}
				s.unixChans.Add(1)
				s.forward(nc, "unix", m.Path)
			case "direct-tcpip":
				var m struct {
					Host     string
					Port     uint32
					OrigHost string
					OrigPort uint32
				}
				if err := ssh.Unmarshal(nc.ExtraData(), &m); err != nil {
					_ = nc.Reject(ssh.Prohibited, "bad request")
					return
				}
				s.forward(nc, "tcp", net.JoinHostPort(m.Host, strconv.Itoa(int(m.Port))))
			default:
				_ = nc.Reject(ssh.UnknownChannelType, "not here")
			}
		}()
	}
	wg.Wait()
}

// forward connects a channel to addr, as sshd does: refused with
// "connect failed" when nothing answers there.
func (s *Server) forward(nc ssh.NewChannel, network, addr string) {
	c, err := net.Dial(network, addr)
	if err != nil {
		_ = nc.Reject(ssh.ConnectionFailed, "connect failed: "+err.Error())
		return
	}
	ch, reqs, err := nc.Accept()
	if err != nil {
		c.Close()
		return
	}
	go ssh.DiscardRequests(reqs)
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(c, ch)
		if u, ok := c.(interface{ CloseWrite() error }); ok {
			_ = u.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(ch, c)
		_ = ch.CloseWrite()
		done <- struct{}{}
	}()
	<-done
	<-done
	c.Close()
	ch.Close()
}

func (s *Server) session(nc ssh.NewChannel) {
	ch, reqs, err := nc.Accept()
	if err != nil {
		return
	}
	defer ch.Close()
	for r := range reqs {
		switch r.Type {
		case "exec":
			if len(r.Payload) < 4 {
				_ = r.Reply(false, nil)
				continue
			}
			cmdline := string(r.Payload[4:])
			_ = r.Reply(true, nil)
			s.mu.Lock()
			s.execs = append(s.execs, cmdline)
			s.mu.Unlock()
			code := s.run(ch, cmdline)
			b := make([]byte, 4)
			binary.BigEndian.PutUint32(b, uint32(code))
			_, _ = ch.SendRequest("exit-status", false, b)
			return
		case "subsystem":
			if len(r.Payload) < 4 || string(r.Payload[4:]) != "sftp" {
				_ = r.Reply(false, nil)
				continue
			}
			_ = r.Reply(true, nil)
			srv, err := sftp.NewServer(ch, sftp.WithServerWorkingDirectory(s.Dir))
			if err != nil {
				return
			}
			_ = srv.Serve()
			return
		default:
			if r.WantReply {
				_ = r.Reply(false, nil)
			}
		}
	}
}

func (s *Server) run(ch ssh.Channel, cmdline string) int {
	cmd := exec.Command("/bin/sh", "-c", cmdline)
	cmd.Env = s.Env
	cmd.Dir = s.Dir
	cmd.Stdin = ch
	cmd.Stdout = ch
	cmd.Stderr = ch.Stderr()
	// As sshd: the command leads a session of its own.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		fmt.Fprintln(ch.Stderr(), err)
		return 255
	}
	return 0
}
