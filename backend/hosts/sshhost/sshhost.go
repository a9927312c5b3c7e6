// Package sshhost is the SSH host provider: a hosts.Provider that reaches
// a machine over one SSH connection (sshconn), readies its engine there
// (bootstrap) and gives the engine's address and a transport to it. When
// the engine itself is gone from a host that is still reachable (killed,
// crashed), the next dial starts it again — its own recovery then takes
// its agents back; when the host is unreachable, nothing is started or
// recovered anywhere: dials fail at once until the connection is back.
package sshhost

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"golang.org/x/crypto/ssh"

	"shepherd/backend/hosts"
	"shepherd/backend/hosts/bootstrap"
	"shepherd/backend/hosts/sshconn"
)

// Provider reaches one host over SSH.
type Provider struct {
	// Dest is the host: an alias of ~/.ssh/config, user@host[:port] or
	// ssh://user@host[:port].
	Dest      string
	SSH       sshconn.Options
	Bootstrap bootstrap.Options
}

var _ hosts.Provider = Provider{}

// Open connects, readies the engine and returns its address and a
// *Transport. Its errors are sshconn.Dial's (an unknown or changed host
// key, authentication) and bootstrap.Ensure's (bootstrap.ErrNoBuild: the
// host needs a newer engine).
func (p Provider) Open(ctx context.Context) (hosts.Address, hosts.Transport, error) {
	c, err := sshconn.Dial(ctx, p.Dest, p.SSH)
	if err != nil {
		return hosts.Address{}, nil, err
	}
	eng, err := bootstrap.Ensure(ctx, c, p.Bootstrap)
	if err != nil {
		c.Close()
		return hosts.Address{}, nil, fmt.Errorf("%s: %w", p.Dest, err)
	}
	return eng.Address, &Transport{conn: c, opts: p.Bootstrap, eng: eng}, nil
}

// Transport is a host's engine over its SSH connection.
type Transport struct {
	conn *sshconn.Conn
	opts bootstrap.Options

	mu      sync.Mutex
	eng     bootstrap.Engine
	ensures sync.Mutex // one restart at a time
}

var (
	_ hosts.Transport = (*Transport)(nil)
	_ hosts.Addressed = (*Transport)(nil)
)

// Conn is the SSH connection.
func (t *Transport) Conn() *sshconn.Conn { return t.conn }

// Engine is the engine as the last bootstrap left it.
func (t *Transport) Engine() bootstrap.Engine {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.eng
}

// Address is the engine's address now.
func (t *Transport) Address() hosts.Address { return t.Engine().Address }

// State is the connection's.
func (t *Transport) State() hosts.State { return t.conn.State() }

// Close closes the connection; the engine and its agents keep running.
func (t *Transport) Close() error { return t.conn.Close() }

// DialEngine opens a channel to the engine's socket. An engine that is not
// there while the host is (nothing accepts on its socket) is started again
// first; an unreachable host fails at once.
func (t *Transport) DialEngine(ctx context.Context) (net.Conn, error) {
	addr := t.Address()
	c, err := t.conn.DialUnix(ctx, addr.Endpoint)
	if err == nil || !engineGone(err) {
		return c, err
	}
	if err := t.restart(ctx, addr); err != nil {
		return nil, err
	}
	return t.conn.DialUnix(ctx, t.Address().Endpoint)
}

// engineGone: the host answered, but nothing accepts on the socket.
func engineGone(err error) bool {
	var oe *ssh.OpenChannelError
	return errors.As(err, &oe) && oe.Reason == ssh.ConnectionFailed
}

func (t *Transport) restart(ctx context.Context, was hosts.Address) error {
	t.ensures.Lock()
	defer t.ensures.Unlock()
	if t.Address() != was {
		return nil // another dial restarted it meanwhile
	}
	t.opts.Logger.Warn().Str("host", t.conn.Target().Alias).Int("pid", was.PID).
		Msg("the host's engine is gone; starting it again")
	eng, err := bootstrap.Ensure(ctx, t.conn, t.opts)
	if err != nil {
		return fmt.Errorf("the engine on %s is gone and could not be started again: %w", t.conn.Target().Alias, err)
	}
	t.mu.Lock()
	t.eng = eng
	t.mu.Unlock()
	return nil
}
