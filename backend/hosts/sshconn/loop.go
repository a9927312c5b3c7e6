package sshconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jonboulle/clockwork"
	"golang.org/x/crypto/ssh"

	"shepherd/backend/hosts"
	"shepherd/backend/hosts/hostkeys"
	"shepherd/backend/hosts/sshconfig"
)

// The connection's life: connected (jump hosts, the handshake), watched
// with keepalives, reconnected with backoff when lost, closed.

// Reconnect asks for a reconnect now, without waiting for the backoff (and
// after a refused host key, once the user has acted).
func (c *Conn) Reconnect() {
	select {
	case c.retry <- struct{}{}:
	default:
	}
}

// Close ends the connection for good. The host's engine and agents keep
// running.
func (c *Conn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		c.mu.Lock()
		c.dropLocked()
		c.mu.Unlock()
		<-c.done
		c.setState(hosts.State{Phase: hosts.Closed, Since: c.opts.Clock.Now()})
	})
	return nil
}

func (c *Conn) dropLocked() {
	if c.client != nil {
		_ = c.client.Close()
		c.client = nil
	}
	for i := len(c.hops) - 1; i >= 0; i-- {
		_ = c.hops[i].Close()
	}
	c.hops = nil
}

// loop keeps the connection: keepalives while connected; when lost, the
// state says so and reconnects follow with backoff.
func (c *Conn) loop(client *ssh.Client) {
	defer close(c.done)
	clock := c.opts.Clock
	for {
		err := c.watch(client)
		select {
		case <-c.closed:
			return
		default:
		}
		c.mu.Lock()
		c.dropLocked()
		c.mu.Unlock()
		down := clock.Now()
		backoff := c.opts.BackoffMin
		for attempt := 1; ; attempt++ {
			retrying := !refused(err)
			st := hosts.State{Phase: hosts.Unreachable, Since: down, Err: err, Attempt: attempt - 1, Retrying: retrying}
			var wait <-chan time.Time
			var timer clockwork.Timer
			if retrying {
				st.NextTry = clock.Now().Add(backoff)
				timer = clock.NewTimer(backoff)
				wait = timer.Chan()
			}
			c.setState(st)
			select {
			case <-c.closed:
			case <-wait:
			case <-c.retry:
			}
			if timer != nil {
				timer.Stop()
			}
			select {
			case <-c.closed:
				return
			default:
			}
			c.setState(hosts.State{Phase: hosts.Connecting, Since: clock.Now(), Err: err, Attempt: attempt})
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				select {
				case <-c.closed:
					cancel()
				case <-ctx.Done():
				}
			}()
			var hops []*ssh.Client
			client, hops, err = c.connect(ctx)
			cancel()
			if err == nil {
				c.mu.Lock()
				select {
				case <-c.closed:
					c.mu.Unlock()
					client.Close()
					for _, h := range hops {
						h.Close()
					}
					return
				default:
				}
				c.client, c.hops = client, hops
				c.mu.Unlock()
				c.setState(hosts.State{Phase: hosts.Connected, Since: clock.Now()})
				break
			}
			select {
			case <-c.closed:
				return
			default:
			}
			backoff = min(backoff*2, c.opts.BackoffMax)
		}
	}
}

// refused errors need the user: no reconnect is tried by itself.
func refused(err error) bool {
	return errors.Is(err, hostkeys.ErrUnknownKey) || errors.Is(err, hostkeys.ErrChangedKey) || errors.Is(err, hostkeys.ErrRevokedKey)
}

// watch sends keepalives on client until one fails or the connection
// ends (the error), or Close (nil).
func (c *Conn) watch(client *ssh.Client) error {
	clock := c.opts.Clock
	ended := make(chan error, 1)
	go func() { ended <- client.Wait() }()
	tick := clock.NewTicker(c.opts.Keepalive)
	defer tick.Stop()
	for {
		select {
		case <-c.closed:
			return nil
		case err := <-ended:
			if err == nil {
				err = errors.New("the host closed the connection")
			}
			return fmt.Errorf("connection lost: %w", err)
		case <-tick.Chan():
			reply := make(chan error, 1)
			go func() {
				_, _, err := client.SendRequest("keepalive@openssh.com", true, nil)
				reply <- err
			}()
			// A timer, stopped once answered: nothing is left waiting
			// on the clock.
			timeout := clock.NewTimer(c.opts.KeepaliveTimeout)
			var err error
			select {
			case <-c.closed:
			case err = <-reply:
				if err != nil {
					err = fmt.Errorf("keepalive failed: %w", err)
				}
			case <-timeout.Chan():
				err = fmt.Errorf("no answer to a keepalive in %s", c.opts.KeepaliveTimeout)
			}
			timeout.Stop()
			if c.opts.keepaliveDone != nil {
				c.opts.keepaliveDone(err)
			}
			select {
			case <-c.closed:
				return nil
			default:
			}
			if err != nil {
				return err
			}
		}
	}
}

// connect makes one connection to the target, through its ProxyJump hops.
func (c *Conn) connect(ctx context.Context) (*ssh.Client, []*ssh.Client, error) {
	timeout := c.opts.DialTimeout
	if c.target.ConnectTimeout > 0 {
		timeout = c.target.ConnectTimeout
	}
	var hops []*ssh.Client
	fail := func(err error) (*ssh.Client, []*ssh.Client, error) {
		for i := len(hops) - 1; i >= 0; i-- {
			hops[i].Close()
		}
		return nil, nil, err
	}
	var notes []string
	defer func() {
		c.mu.Lock()
		c.notes = notes
		c.mu.Unlock()
	}()
	chain := make([]sshconfig.Target, 0, len(c.target.ProxyJump)+1)
	for _, hop := range c.target.ProxyJump {
		ht, err := sshconfig.ResolveHop(hop, c.opts.Env)
		if err != nil {
			return fail(fmt.Errorf("ProxyJump %s: %w", hop.Host, err))
		}
		chain = append(chain, ht)
	}
	chain = append(chain, c.target)
	var prev *ssh.Client
	for i, t := range chain {
		dctx, cancel := context.WithTimeout(ctx, timeout)
		var raw net.Conn
		var err error
		if prev == nil {
			raw, err = c.opts.Dial(dctx, "tcp", t.Addr())
		} else {
			raw, err = prev.DialContext(dctx, "tcp", t.Addr())
		}
		if err != nil {
			cancel()
			return fail(fmt.Errorf("%w: connect to %s: %v", hosts.ErrUnreachable, t.Addr(), err))
		}
		cl, n, err := c.handshake(dctx, raw, t)
		cancel()
		notes = append(notes, n...)
		if err != nil {
			raw.Close()
			if i < len(chain)-1 {
				err = fmt.Errorf("ProxyJump %s: %w", t.Alias, err)
			}
			return fail(err)
		}
		if i < len(chain)-1 {
			hops = append(hops, cl)
		}
		prev = cl
	}
	return prev, hops, nil
}

func (c *Conn) handshake(ctx context.Context, raw net.Conn, t sshconfig.Target) (*ssh.Client, []string, error) {
	k := keys(t, c.opts.Env.Home, c.opts.AgentSocket)
	defer k.Close()
	db := HostKeys(t)
	algos, err := db.Algorithms(t.Addr())
	if err != nil {
		return nil, k.notes, err
	}
	cfg := &ssh.ClientConfig{
		User:              t.User,
		Auth:              []ssh.AuthMethod{ssh.PublicKeysCallback(func() ([]ssh.Signer, error) { return k.signers, nil })},
		HostKeyCallback:   db.Callback(),
		HostKeyAlgorithms: algos,
	}
	type result struct {
		cl  *ssh.Client
		err error
	}
	res := make(chan result, 1)
	go func() {
		conn, chans, reqs, err := ssh.NewClientConn(raw, t.Addr(), cfg)
		if err != nil {
			res <- result{nil, err}
			return
		}
		res <- result{ssh.NewClient(conn, chans, reqs), nil}
	}()
	var r result
	select {
	case r = <-res:
	case <-ctx.Done():
		raw.Close() // ends the handshake
		<-res
		return nil, k.notes, fmt.Errorf("%w: %s: no SSH handshake in time: %v", hosts.ErrUnreachable, t.Addr(), ctx.Err())
	}
	if r.err == nil {
		return r.cl, k.notes, nil
	}
	var unknown *hostkeys.UnknownKeyError
	var changed *hostkeys.ChangedKeyError
	var revoked *hostkeys.RevokedKeyError
	switch {
	case errors.As(r.err, &unknown):
		return nil, k.notes, unknown
	case errors.As(r.err, &changed):
		return nil, k.notes, changed
	case errors.As(r.err, &revoked):
		return nil, k.notes, revoked
	case strings.Contains(r.err.Error(), "unable to authenticate"):
		msg := fmt.Sprintf("%s@%s took none of the %d keys offered (the SSH agent's and ~/.ssh's)", t.User, t.Addr(), len(k.signers))
		if len(k.notes) > 0 {
			msg += "; " + strings.Join(k.notes, "; ")
		}
		return nil, k.notes, fmt.Errorf("%w: %s", ErrAuth, msg)
	}
	return nil, k.notes, fmt.Errorf("%w: %s: %v", hosts.ErrUnreachable, t.Addr(), r.err)
}
