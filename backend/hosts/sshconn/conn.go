// Package sshconn is one SSH connection to a host (golang.org/x/crypto/ssh),
// kept up for as long as Shepherd wants the host: keys from the SSH agent
// and ~/.ssh, the user's ~/.ssh/config (sshconfig), the host key checked
// against known_hosts (hostkeys), ProxyJump, keepalives
// (keepalive@openssh.com) and reconnects with exponential backoff, both on
// an injected clock, and every change of state reported. Everything Shepherd
// sends to the host's engine goes over this one connection as forwarded
// channels to the engine's Unix socket (DialUnix:
// direct-streamlocal@openssh.com) — never one SSH session per agent, so a
// host with many agents never meets sshd's MaxSessions.
package sshconn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/rs/zerolog"
	"golang.org/x/crypto/ssh"

	"shepherd/backend/hosts"
	"shepherd/backend/hosts/hostkeys"
	"shepherd/backend/hosts/sshconfig"
)

// ErrAuth: the host took none of the keys offered.
var ErrAuth = errors.New("SSH authentication failed")

// Defaults of Options.
const (
	DefaultKeepalive   = 10 * time.Second
	DefaultBackoffMin  = time.Second
	DefaultBackoffMax  = time.Minute
	DefaultDialTimeout = 15 * time.Second
)

// Options configure a Conn. Zero values are the defaults.
type Options struct {
	// Env is whose ~/.ssh is used; zero: this process's user.
	Env sshconfig.Env
	// AgentSocket is the SSH agent; "": $SSH_AUTH_SOCK. The config's
	// IdentityAgent wins.
	AgentSocket string
	// Clock drives keepalives and backoff; nil: the real clock.
	Clock clockwork.Clock
	// Keepalive is how often a keepalive is sent; KeepaliveTimeout how
	// long its answer may take before the host counts as lost (default:
	// Keepalive).
	Keepalive, KeepaliveTimeout time.Duration
	// BackoffMin and BackoffMax bound the wait between reconnects, which
	// doubles after each failure.
	BackoffMin, BackoffMax time.Duration
	// DialTimeout bounds one connection attempt (TCP and handshake); the
	// config's ConnectTimeout wins. Network time, not the clock's.
	DialTimeout time.Duration
	// OnState is told every change of state, in order, from one goroutine
	// (it must not block for long).
	OnState func(hosts.State)
	// Dial opens the TCP connection to the first hop; nil: net.Dialer.
	Dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	Logger zerolog.Logger

	// keepaliveDone is told each keepalive's outcome once its timeout is
	// stopped (tests step the clock by it).
	keepaliveDone func(error)
}

func (o *Options) defaults() error {
	if o.Env.Home == "" {
		env, err := sshconfig.DefaultEnv()
		if err != nil {
			return err
		}
		o.Env = env
	}
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.Keepalive <= 0 {
		o.Keepalive = DefaultKeepalive
	}
	if o.KeepaliveTimeout <= 0 {
		o.KeepaliveTimeout = o.Keepalive
	}
	if o.BackoffMin <= 0 {
		o.BackoffMin = DefaultBackoffMin
	}
	if o.BackoffMax < o.BackoffMin {
		o.BackoffMax = max(DefaultBackoffMax, o.BackoffMin)
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.Dial == nil {
		o.Dial = (&net.Dialer{}).DialContext
	}
	return nil
}

// Conn is one host's SSH connection, reconnected when lost.
type Conn struct {
	target sshconfig.Target
	opts   Options
	keys   *hostkeys.DB

	mu     sync.Mutex
	client *ssh.Client // nil while not connected
	hops   []*ssh.Client
	state  hosts.State
	notes  []string

	retry  chan struct{} // Reconnect: try now
	closed chan struct{}
	once   sync.Once
	done   chan struct{} // the loop has ended
}

// Dial resolves dest (an alias of ~/.ssh/config, user@host[:port] or
// ssh://user@host[:port]) and connects. The first connection is made
// before Dial returns and its failure is returned as is: an unknown host
// key (*hostkeys.UnknownKeyError, with its fingerprint, for the user to
// accept with HostKeys(target).Accept), a changed one, or ErrAuth.
func Dial(ctx context.Context, dest string, opts Options) (*Conn, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	t, err := sshconfig.Resolve(dest, opts.Env)
	if err != nil {
		return nil, err
	}
	return DialTarget(ctx, t, opts)
}

// HostKeys is the known_hosts database a target is checked against.
func HostKeys(t sshconfig.Target) *hostkeys.DB {
	return &hostkeys.DB{User: t.KnownHosts, Global: t.GlobalKnownHosts, Hash: t.HashKnownHosts}
}

// DialTarget connects to a resolved target (see Dial).
func DialTarget(ctx context.Context, t sshconfig.Target, opts Options) (*Conn, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	c := &Conn{
		target: t, opts: opts, keys: HostKeys(t),
		retry: make(chan struct{}, 1), closed: make(chan struct{}), done: make(chan struct{}),
	}
	c.setState(hosts.State{Phase: hosts.Connecting, Since: opts.Clock.Now()})
	client, hops, err := c.connect(ctx)
	if err != nil {
		close(c.done)
		return nil, err
	}
	c.mu.Lock()
	c.client, c.hops = client, hops
	c.mu.Unlock()
	c.setState(hosts.State{Phase: hosts.Connected, Since: opts.Clock.Now()})
	go c.loop(client)
	return c, nil
}

// Target is what the connection goes to.
func (c *Conn) Target() sshconfig.Target { return c.target }

// State is the connection's state now.
func (c *Conn) State() hosts.State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Notes say what was left out of the last connection attempt (keys
// skipped, an agent that did not answer).
func (c *Conn) Notes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.notes...)
}

func (c *Conn) setState(s hosts.State) {
	c.mu.Lock()
	c.state = s
	c.mu.Unlock()
	c.opts.Logger.Info().Str("host", c.target.Alias).Str("state", string(s.Phase)).Int("attempt", s.Attempt).
		AnErr("reason", s.Err).Msg("host connection")
	if c.opts.OnState != nil {
		c.opts.OnState(s)
	}
}

// Client is the SSH client of the connection now (for sessions and SFTP);
// it fails at once while the host is not connected.
func (c *Conn) Client() (*ssh.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state.Phase == hosts.Closed {
		return nil, hosts.ErrClosed
	}
	if c.client == nil {
		err := c.state.Err
		if err == nil {
			err = errors.New("not connected")
		}
		return nil, fmt.Errorf("%w: %s: %v", hosts.ErrUnreachable, c.target.Alias, err)
	}
	return c.client, nil
}

// DialUnix opens a forwarded channel to the Unix socket at path on the
// host (direct-streamlocal@openssh.com) over the one connection.
func (c *Conn) DialUnix(ctx context.Context, path string) (net.Conn, error) {
	cl, err := c.Client()
	if err != nil {
		return nil, err
	}
	conn, err := cl.DialContext(ctx, "unix", path)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("open %s on %s: %w", path, c.target.Alias, err)
	}
	return conn, nil
}

// Transport is a hosts.Transport whose engine listens on the Unix socket
// at path on this host.
func (c *Conn) Transport(path string) hosts.Transport { return unixTransport{c, path} }

type unixTransport struct {
	c    *Conn
	path string
}

func (t unixTransport) DialEngine(ctx context.Context) (net.Conn, error) {
	return t.c.DialUnix(ctx, t.path)
}
func (t unixTransport) State() hosts.State { return t.c.State() }
func (t unixTransport) Close() error       { return t.c.Close() }

// ExitError is a remote command that ended with a non-zero status.
type ExitError struct {
	Status int
	Stderr string
}

func (e *ExitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		return fmt.Sprintf("exited with status %d", e.Status)
	}
	return fmt.Sprintf("exited with status %d: %s", e.Status, msg)
}

// Run runs script with the host's POSIX shell (`sh -s`, the script on its
// standard input, so that the user's login shell — fish, zsh… — never
// parses it) in a session of its own and returns its standard output. A
// non-zero exit is an *ExitError with its standard error.
func (c *Conn) Run(ctx context.Context, script string) ([]byte, error) {
	cl, err := c.Client()
	if err != nil {
		return nil, err
	}
	s, err := cl.NewSession()
	if err != nil {
		return nil, fmt.Errorf("open a session on %s: %w", c.target.Alias, err)
	}
	defer s.Close()
	var out, errb bytes.Buffer
	s.Stdin = strings.NewReader(script)
	s.Stdout, s.Stderr = &out, &errb
	res := make(chan error, 1)
	go func() { res <- s.Run("sh -s") }()
	select {
	case err = <-res:
	case <-ctx.Done():
		_ = s.Signal(ssh.SIGKILL)
		s.Close()
		return out.Bytes(), ctx.Err()
	}
	var ee *ssh.ExitError
	if errors.As(err, &ee) {
		return out.Bytes(), &ExitError{Status: ee.ExitStatus(), Stderr: errb.String()}
	}
	if err != nil {
		return out.Bytes(), fmt.Errorf("run on %s: %w", c.target.Alias, err)
	}
	return out.Bytes(), nil
}
